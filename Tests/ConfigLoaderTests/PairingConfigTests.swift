import ConfigLoader
import Testing

@testable import BridgeCore

/// `bluetooth.agent`, `devices[].pairing`, `devices[].passkey` (SPEC §11) and the agent's answers.
@Suite struct PairingConfigTests {
    func parse(_ yaml: String) throws(ConfigError) -> BridgeConfig {
        try BridgeConfig.parse(
            yaml: "mqtt: { url: mqtt://b }\n" + yaml, fileName: "bridge.yaml", environment: ["LOCK": "012345"], hostName: "h")
    }

    func message(_ yaml: String) -> String? {
        do {
            _ = try parse(yaml)
            return nil
        } catch {
            return error.description
        }
    }

    static let lock = BluetoothAddress("D0:5A:00:00:EC:02")!
    static let thermo = BluetoothAddress("E4:5F:01:AB:CD:EF")!
    static let stranger = BluetoothAddress("11:22:33:44:55:66")!

    static let yaml = """
        devices:
          - { match: { address: "D0:5A:00:00:EC:02" }, pairing: passkey, passkey: "${LOCK}" }
          - { match: { address: "E4:5F:01:AB:CD:EF" } }
          - { match: { name: "Scale*" }, pairing: just_works }
        """

    @Test func parsed() throws {
        let config = try parse(Self.yaml)
        #expect(config.bluetooth.agent)
        #expect(config.devices.map(\.pairing) == [.passkey, .none, .justWorks])
        #expect(config.devices[0].passkey == 12345)
        #expect(try parse("bluetooth: { agent: false }\n").bluetooth.agent == false)
        #expect(try parse("devices: [{ match: { address: \"D0:5A:00:00:EC:02\" }, pairing: passkey, passkey: 999999 }]\n").devices[0].passkey == 999_999)
    }

    @Test func refused() {
        #expect(message("devices: [{ match: { address: \"D0:5A:00:00:EC:02\" }, pairing: pin }]\n")?
            .contains("must be one of none, just_works, passkey, not 'pin'") == true)
        #expect(message("devices: [{ match: { address: \"D0:5A:00:00:EC:02\" }, pairing: passkey }]\n")?
            .contains("needs 'devices[0].passkey' (six digits)") == true)
        #expect(message("devices: [{ match: { address: \"D0:5A:00:00:EC:02\" }, pairing: passkey, passkey: \"12a456\" }]\n")?
            .contains("must be six digits") == true)
        #expect(message("devices: [{ match: { address: \"D0:5A:00:00:EC:02\" }, pairing: passkey, passkey: 1234567 }]\n")?
            .contains("must be six digits") == true)
        #expect(message("devices: [{ match: { address: \"D0:5A:00:00:EC:02\" }, passkey: 123456 }]\n")?
            .contains("only used with 'pairing: passkey'") == true)
    }

    @Test func agentAnswers() throws {
        let policy = PairingAgentPolicy(config: try parse(Self.yaml))
        #expect(policy.capability == "KeyboardOnly")
        #expect(policy.answer(.passkey, address: Self.lock, name: nil) == .passkey(12345))
        #expect(policy.answer(.confirmation(passkey: 1), address: Self.lock, name: nil) != .accept)
        #expect(policy.answer(.authorization, address: Self.lock, name: nil) != .accept)
        // pairing: none and just_works: Just Works accepted, no passkey to give.
        #expect(policy.answer(.authorization, address: Self.thermo, name: nil) == .accept)
        #expect(policy.answer(.confirmation(passkey: 42), address: Self.thermo, name: nil) == .accept)
        #expect(policy.answer(.passkey, address: Self.thermo, name: nil) != .passkey(0))
        #expect(policy.answer(.authorization, address: Self.stranger, name: "Scale 2") == .accept)
        // Strangers: everything rejected, also what only informs.
        for request: PairingAgentPolicy.Request in [
            .passkey, .confirmation(passkey: 1), .authorization, .authorizeService(uuid: "180f"), .displayPasskey(1, entered: 0),
        ] {
            guard case .reject(let why) = policy.answer(request, address: Self.stranger, name: "Phone") else {
                Issue.record("\(request) from a stranger was not rejected")
                continue
            }
            #expect(why.contains("not a configured device"))
        }
        #expect(policy.answer(.pinCode, address: Self.thermo, name: nil) != .accept)
        #expect(PairingAgentPolicy(config: try parse("devices: [{ match: { address: \"D0:5A:00:00:EC:02\" } }]\n")).capability == "NoInputNoOutput")
        #expect(PairingAgentPolicy.sixDigits(42) == "000042")
    }
}
