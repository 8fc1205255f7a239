import BridgeBase
import YAMLKit

/// A device's `exchanges`: its request/answer rules (see ``DeviceExchanges``). Either a list of
/// rules, or `{reset_on_connect: true, initial_state: NAME, rules: [...]}`. A rule:
/// `{when: {write: {characteristic, value: PATTERN, checksum: xor8 | {kind: xor8, from: N}}, state: NAME},
/// then: [{notify: {characteristic, value}}, {set: {characteristic, value}}, {error: ATT}, {state: NAME}]}`.
extension ScenarioReader {
    func exchanges(_ node: Node, services: [ServiceSpec]) throws(ScenarioError) -> DeviceExchanges {
        var out = DeviceExchanges()
        var list = node
        if node.mapping != nil {
            let m = try mapping(node, "exchanges", keys: ["reset_on_connect", "initial_state", "rules"])
            if let n = m["reset_on_connect"] { out.resetOnConnect = try bool(n) }
            if let n = m["initial_state"] { out.initialState = try stateName(n) }
            guard let rules = m["rules"] else { throw fail(node, "exchanges needs rules") }
            list = rules
        }
        for item in try sequence(list, "exchanges") {
            out.rules.append(try exchangeRule(item, services: services))
        }
        return out
    }

    func exchangeRule(_ node: Node, services: [ServiceSpec]) throws(ScenarioError) -> ExchangeRule {
        let m = try mapping(node, "exchange rule", keys: ["when", "then"])
        guard let whenNode = m["when"] else { throw fail(node, "an exchange rule needs when: {write: {characteristic: UUID}}") }
        let when = try mapping(whenNode, "when", keys: ["write", "state"])
        guard let writeNode = when["write"] else { throw fail(whenNode, "when needs write: {characteristic: UUID}") }
        let w = try mapping(writeNode, "when.write", keys: ["characteristic", "value", "checksum"])
        guard let cNode = w["characteristic"] else { throw fail(writeNode, "when.write needs a characteristic") }
        let written = try exchangeCharacteristic(cNode, services: services)
        let flags = SimCharacteristic.clientFlags(written.flags)
        guard flags.contains("write") || flags.contains("write-without-response") || flags.contains("reliable-write") else {
            throw fail(cNode, "characteristic \(written.uuid) cannot be written (flags \(written.flags))")
        }
        var rule = ExchangeRule(characteristic: written.uuid, effects: [])
        if let n = w["value"] {
            guard let p = BytePattern(try string(n)) else {
                throw fail(n, "expected a hex pattern such as \"5711........00\" (.. is any one byte)")
            }
            rule.pattern = p
        }
        if let n = w["checksum"] { rule.checksum = try checksum(n) }
        if let n = when["state"] { rule.state = try stateName(n) }
        if let n = m["then"] {
            for e in try sequence(n, "then") { rule.effects.append(try exchangeEffect(e, services: services)) }
        }
        return rule
    }

    func exchangeEffect(_ node: Node, services: [ServiceSpec]) throws(ScenarioError) -> ExchangeEffect {
        let m = try mapping(node, "effect", keys: ["notify", "set", "error", "state"])
        guard m.count == 1, let first = m.first else {
            throw fail(node, "an effect is one of notify: {characteristic, value}, set: {characteristic, value}, error: ATT, state: NAME")
        }
        let (key, value) = (first.key, first.value)
        switch key {
        case "notify", "set":
            let e = try mapping(value, key, keys: ["characteristic", "value"])
            guard let cNode = e["characteristic"], let vNode = e["value"] else {
                throw fail(value, "\(key) needs a characteristic and a value")
            }
            let c = try exchangeCharacteristic(cNode, services: services)
            let bytes = try self.bytes(vNode)
            guard key == "set" else {
                guard SimCharacteristic.clientFlags(c.flags).contains(where: { $0 == "notify" || $0 == "indicate" }) else {
                    throw fail(cNode, "characteristic \(c.uuid) neither notifies nor indicates")
                }
                return .notify(characteristic: c.uuid, value: bytes)
            }
            return .set(characteristic: c.uuid, value: bytes)
        case "error":
            return .error(try errorSpec(value, .write))
        default:
            return .state(try stateName(value))
        }
    }

    /// The characteristic a rule names: its UUID must be in exactly one of the device's services.
    func exchangeCharacteristic(_ node: Node, services: [ServiceSpec]) throws(ScenarioError) -> CharacteristicSpec {
        let u = try uuid(node)
        let found = services.flatMap(\.characteristics).filter { $0.uuid == u }
        guard let c = found.first else { throw fail(node, "no characteristic \(u) in this device's services") }
        guard found.count == 1 else { throw fail(node, "characteristic \(u) is in several services of this device") }
        return c
    }

    func checksum(_ node: Node) throws(ScenarioError) -> FrameChecksum {
        var kindNode = node
        var from = 0
        if node.mapping != nil {
            let m = try mapping(node, "checksum", keys: ["kind", "from"])
            guard let k = m["kind"] else { throw fail(node, "checksum needs a kind (xor8)") }
            kindNode = k
            if let f = m["from"] { from = try integer(f, in: 0...511) }
        }
        let word = try string(kindNode)
        guard let kind = FrameChecksum.Kind(rawValue: word) else {
            throw fail(kindNode, "unknown checksum \(word) (xor8)")
        }
        return FrameChecksum(kind: kind, from: from)
    }

    func stateName(_ node: Node) throws(ScenarioError) -> String {
        let s = try string(node)
        guard !s.isEmpty, s.utf8.allSatisfy({ isPathChar($0) || $0 == UInt8(ascii: "-") }) else {
            throw fail(node, "a state name is letters, digits, _ or -")
        }
        return s
    }
}
