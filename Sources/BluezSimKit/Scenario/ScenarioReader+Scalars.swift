import BridgeBase
import DBusKit
import Foundation
import YAMLKit

/// The scalar readers of a scenario (strings, numbers, durations, hex bytes, UUIDs, addresses),
/// each failing with the node's position.
extension ScenarioReader {
    func fail(_ node: Node?, _ message: String) -> ScenarioError {
        ScenarioError(code: .invalid, file: file, line: node?.mark.line ?? 0, column: node?.mark.column ?? 0, message: message)
    }

    func mapping(_ node: Node, _ what: String, keys: Set<String>) throws(ScenarioError) -> [String: Node] {
        var out: [String: Node] = [:]
        for (k, v) in try pairs(node, what) {
            let key = try string(k)
            guard keys.contains(key) else {
                throw fail(k, "unknown key \(key) in \(what) (expected one of: \(keys.sorted().joined(separator: ", ")))")
            }
            guard out[key] == nil else { throw fail(k, "duplicate key \(key)") }
            out[key] = v
        }
        return out
    }

    func pairs(_ node: Node, _ what: String) throws(ScenarioError) -> [(Node, Node)] {
        guard let m = node.mapping else { throw fail(node, "\(what) must be a mapping") }
        return m.entries.map { ($0.key, $0.value) }
    }

    func sequence(_ node: Node, _ what: String) throws(ScenarioError) -> [Node] {
        guard let s = node.sequence else { throw fail(node, "\(what) must be a list") }
        return s.items
    }

    func string(_ node: Node) throws(ScenarioError) -> String {
        guard let s = node.scalar?.text else { throw fail(node, "expected a text value") }
        return s
    }

    func bool(_ node: Node) throws(ScenarioError) -> Bool {
        switch try string(node).lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default: throw fail(node, "expected true or false")
        }
    }

    func integer(_ node: Node, in range: ClosedRange<Int>) throws(ScenarioError) -> Int {
        let s = try string(node).replacingOccurrences(of: "_", with: "")
        let v: Int?
        if s.lowercased().hasPrefix("0x") {
            v = Int(s.dropFirst(2), radix: 16)
        } else if s.lowercased().hasPrefix("-0x") {
            v = Int(s.dropFirst(3), radix: 16).map { -$0 }
        } else {
            v = Int(s)
        }
        guard let v, range.contains(v) else { throw fail(node, "expected an integer in \(range)") }
        return v
    }

    func number(_ node: Node) throws(ScenarioError) -> Double {
        guard let v = Double(try string(node)), v.isFinite else { throw fail(node, "expected a number") }
        return v
    }

    func duration(_ node: Node) throws(ScenarioError) -> Duration {
        guard let d = DurationText.parse(try string(node)) else {
            throw fail(node, "expected a duration such as 500ms, 2s or 1m")
        }
        return d
    }

    func positiveDuration(_ node: Node) throws(ScenarioError) -> Duration {
        let d = try duration(node)
        guard d > .zero else { throw fail(node, "duration must be greater than zero") }
        return d
    }

    func mtu(_ node: Node) throws(ScenarioError) -> UInt16 {
        UInt16(try integer(node, in: 23...517))
    }

    func bytes(_ node: Node) throws(ScenarioError) -> [UInt8] {
        if let seq = node.sequence?.items {
            return try seq.map { n throws(ScenarioError) in UInt8(try integer(n, in: 0...255)) }
        }
        guard let b = try? Hex.decode(String(try string(node).filter { $0 != " " })) else { throw fail(node, "expected hex bytes such as \"01ff\" or \"01 ff\"") }
        return b
    }

    func uuid(_ node: Node) throws(ScenarioError) -> String {
        guard let u = BluetoothUUID.normalize(try string(node)) else {
            throw fail(node, "expected a UUID (16-bit such as 180d, or 128-bit)")
        }
        return u
    }

    func address(_ node: Node) throws(ScenarioError) -> String {
        let s = try string(node).uppercased()
        let parts = s.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
            throw fail(node, "expected an address such as C8:12:34:56:78:9A")
        }
        return s
    }

    func isPathChar(_ c: UInt8) -> Bool {
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95
    }

    static func addressValue(_ address: String) -> UInt64 {
        address.split(separator: ":").reduce(UInt64(0)) { $0 << 8 | UInt64(UInt8($1, radix: 16) ?? 0) }
    }

    static func addressText(_ value: UInt64) -> String {
        (0..<6).map { i in
            let b = UInt8(truncatingIfNeeded: value >> (8 * UInt64(5 - i)))
            let h = Hex.encode([b]).uppercased()
            return h
        }.joined(separator: ":")
    }
}
