import BridgeBase
import YAMLKit

/// The security keys of a scenario: a device's `pairing`/`passkey`, an attribute's `security`.
extension ScenarioReader {
    /// `security: none | encrypted | authenticated`.
    func security(_ node: Node) throws(ScenarioError) -> SecurityLevel {
        let word = try string(node)
        guard let level = SecurityLevel(name: word) else {
            throw fail(node, "unknown security '\(word)' (none, encrypted, authenticated)")
        }
        return level
    }

    /// `flags` with every `read`/`write`/`notify`/`indicate` replaced by its BlueZ variant for
    /// `level` (`encrypt-read`, `encrypt-authenticated-read`): what a BlueZ peripheral application
    /// declares for such a characteristic, so a client still sees the plain ATT properties.
    static func secured(_ flags: [String], _ level: SecurityLevel) -> [String] {
        let prefix: String
        switch level {
        case .none: return flags
        case .encrypted: prefix = "encrypt-"
        case .authenticated: prefix = "encrypt-authenticated-"
        }
        return flags.map { ["read", "write", "notify", "indicate"].contains($0) ? prefix + $0 : $0 }
    }

    /// `pairing: just_works | passkey | refuse` with `passkey: "123456"` (six digits, only with
    /// `passkey`, where it is required).
    func pairing(_ node: Node?, passkey passkeyNode: Node?, device: Node) throws(ScenarioError) -> PeripheralPairing {
        let word = try node.map { n throws(ScenarioError) in try string(n) } ?? "just_works"
        switch word {
        case "just_works", "refuse":
            if let passkeyNode { throw fail(passkeyNode, "passkey goes with pairing: passkey") }
            return word == "refuse" ? .refuse : .justWorks
        case "passkey":
            guard let passkeyNode else { throw fail(node ?? device, "pairing: passkey needs a passkey (six digits)") }
            let text = try string(passkeyNode)
            guard text.utf8.count == 6, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = UInt32(text) else {
                throw fail(passkeyNode, "passkey must be six digits, such as \"123456\"")
            }
            return .passkey(value)
        default:
            throw fail(node ?? device, "unknown pairing '\(word)' (just_works, passkey, refuse)")
        }
    }
}
