import BridgeBase
import DBusKit
import Foundation
import YAMLKit

/// The GATT database of a scenario device: services, characteristics with their faults and
/// value generators.
extension ScenarioReader {
    func service(_ node: Node) throws(ScenarioError) -> ServiceSpec {
        let m = try mapping(node, "service", keys: ["uuid", "primary", "characteristics"])
        guard let u = m["uuid"] else { throw fail(node, "service needs a uuid") }
        var spec = ServiceSpec(uuid: try uuid(u))
        if let n = m["primary"] { spec.primary = try bool(n) }
        if let n = m["characteristics"] {
            for c in try sequence(n, "characteristics") { spec.characteristics.append(try characteristic(c)) }
        }
        for c in spec.characteristics {
            guard let target = c.echoTo else { continue }
            guard let t = spec.characteristics.first(where: { $0.uuid == target }) else {
                throw fail(node, "echo_to \(target): no such characteristic in service \(spec.uuid)")
            }
            guard t.flags.contains("notify") || t.flags.contains("indicate") else {
                throw fail(node, "echo_to \(target): that characteristic neither notifies nor indicates")
            }
        }
        return spec
    }

    func characteristic(_ node: Node) throws(ScenarioError) -> CharacteristicSpec {
        let m = try mapping(node, "characteristic", keys: [
            "uuid", "flags", "value", "value_text", "generator", "values", "interval", "rate", "echo_to",
            "read_error", "write_error", "error_when", "accepted_writes", "notify_error", "read_delay", "write_delay",
            "notify_delay", "descriptors", "acquire_notify", "security",
        ])
        guard let u = m["uuid"] else { throw fail(node, "characteristic needs a uuid") }
        var spec = CharacteristicSpec(uuid: try uuid(u), flags: [])
        if let n = m["flags"] {
            spec.flags = try sequence(n, "flags").map { f throws(ScenarioError) in
                let s = try string(f)
                guard Self.flagNames.contains(s) else { throw fail(f, "unknown flag \(s)") }
                return s
            }
        }
        if let n = m["security"] { spec.flags = Self.secured(spec.flags, try security(n)) }
        if let n = m["value"] { spec.value = try bytes(n) }
        if let n = m["value_text"] { spec.value = Array(try string(n).utf8) }
        if let n = m["values"] {
            spec.generator = .cycle(try sequence(n, "values").map { v throws(ScenarioError) in try bytes(v) })
        }
        if let n = m["generator"] { spec.generator = try generator(n) }
        if let n = m["interval"] { spec.interval = try positiveDuration(n) }
        if let n = m["rate"] {
            let hz = try number(n)
            guard hz > 0, hz <= 100_000 else { throw fail(n, "rate must be in (0, 100000] per second") }
            spec.interval = .nanoseconds(Int64((1e9 / hz).rounded()))
        }
        let notifies = spec.flags.contains("notify") || spec.flags.contains("indicate")
        if spec.interval == nil, spec.generator != nil, notifies { spec.interval = .seconds(1) }
        if let n = m["echo_to"] { spec.echoTo = try uuid(n) }
        if let n = m["acquire_notify"] { spec.acquireNotify = try bool(n) }
        spec.faults = try faults(m)
        if let n = m["descriptors"] {
            for d in try sequence(n, "descriptors") {
                let dm = try mapping(d, "descriptor", keys: ["uuid", "value", "value_text", "flags", "security"])
                guard let du = dm["uuid"] else { throw fail(d, "descriptor needs a uuid") }
                var desc = DescriptorSpec(uuid: try uuid(du))
                if let v = dm["value"] { desc.value = try bytes(v) }
                if let v = dm["value_text"] { desc.value = Array(try string(v).utf8) }
                if let f = dm["flags"] { desc.flags = try sequence(f, "flags").map { x throws(ScenarioError) in try string(x) } }
                if let n = dm["security"] { desc.flags = Self.secured(desc.flags, try security(n)) }
                spec.descriptors.append(desc)
            }
        }
        return spec
    }

    /// The fault keys of a characteristic mapping.
    func faults(_ m: [String: Node]) throws(ScenarioError) -> CharacteristicFaults {
        var f = CharacteristicFaults()
        if let n = m["read_error"] { f.readError = try errorSpec(n, .read) }
        if let n = m["notify_error"] { f.notifyError = try errorSpec(n, .notify) }
        if let n = m["read_delay"] { f.setDelay(.read, try duration(n)) }
        if let n = m["write_delay"] { f.setDelay(.write, try duration(n)) }
        if let n = m["notify_delay"] { f.setDelay(.notify, try duration(n)) }
        var condition: WriteCondition?
        if let n = m["error_when"] { condition = try writeCondition(n) }
        if let n = m["accepted_writes"] {
            var c = condition ?? WriteCondition()
            c.valuesNot = try sequence(n, "accepted_writes").map { v throws(ScenarioError) in try bytes(v) }
            condition = c
        }
        if let n = m["write_error"], let list = n.sequence?.items {
            if let extra = m["error_when"] ?? m["accepted_writes"] {
                throw fail(extra, "error_when and accepted_writes go with a single write_error, not a list of rules")
            }
            for item in list {
                let r = try mapping(item, "write_error rule", keys: ["error", "when"])
                guard let e = r["error"] else { throw fail(item, "write_error rule needs an error") }
                f.writeRules.append(WriteFaultRule(error: try errorSpec(e, .write),
                                                   condition: try r["when"].map { c throws(ScenarioError) in try writeCondition(c) }))
            }
        } else if let n = m["write_error"] {
            f.writeRules = [WriteFaultRule(error: try errorSpec(n, .write), condition: condition)]
        } else if m["accepted_writes"] != nil {
            // A control point that rejects other values with the application error 0x80.
            f.writeRules = [WriteFaultRule(error: GattErrorSpec.parse("Failed", operation: .write)!, condition: condition)]
        } else if let n = m["error_when"] {
            throw fail(n, "error_when needs a write_error")
        }
        return f
    }

    /// `NotPermitted`, `org.bluez.Error.Failed`, `0x80` (see ``GattErrorSpec/parse(_:operation:)``), or
    /// `{dbus: org.bluez.Error.X, message: "..."}` for an exact D-Bus error.
    func errorSpec(_ node: Node, _ op: GattOperation) throws(ScenarioError) -> GattErrorSpec {
        if node.mapping != nil {
            let m = try mapping(node, "error", keys: ["dbus", "message"])
            guard let nameNode = m["dbus"] else { throw fail(node, "an error mapping needs dbus: <error name>") }
            let name = try string(nameNode)
            guard name.split(separator: ".").count >= 2, !name.hasSuffix("."), !name.hasPrefix(".") else {
                throw fail(nameNode, "expected a D-Bus error name such as org.bluez.Error.Failed")
            }
            let message = try m["message"].map { n throws(ScenarioError) in try string(n) }
                ?? BluezError.standardMessage(for: name) ?? ""
            return .verbatim(DBusError(name, message))
        }
        guard let spec = GattErrorSpec.parse(try string(node), operation: op) else {
            throw fail(node, "expected an error name such as NotPermitted, Failed, InvalidValueLength or an ATT code such as 0x80")
        }
        return spec
    }

    /// `{value: "02"}`, `{values: ["02", "03"]}`, `{value_not: "01"}`, `{values_not: [...]}`,
    /// `{length: 2}`, `{length_not: 1}` (every key given must match).
    func writeCondition(_ node: Node) throws(ScenarioError) -> WriteCondition {
        let m = try mapping(node, "error_when", keys: ["value", "values", "value_not", "values_not", "length", "length_not"])
        var c = WriteCondition()
        if let n = m["value"] { c.values = [try bytes(n)] }
        if let n = m["values"] { c.values = (c.values ?? []) + (try sequence(n, "values").map { v throws(ScenarioError) in try bytes(v) }) }
        if let n = m["value_not"] { c.valuesNot = [try bytes(n)] }
        if let n = m["values_not"] {
            c.valuesNot = (c.valuesNot ?? []) + (try sequence(n, "values_not").map { v throws(ScenarioError) in try bytes(v) })
        }
        if let n = m["length"] { c.length = try integer(n, in: 0...512) }
        if let n = m["length_not"] { c.lengthNot = try integer(n, in: 0...512) }
        return c
    }

    func generator(_ node: Node) throws(ScenarioError) -> ValueGeneratorSpec {
        var kind: String
        var m: [String: Node] = [:]
        if node.mapping != nil {
            m = try mapping(node, "generator", keys: ["kind", "bytes", "start", "step", "center", "length", "values"])
            guard let k = m["kind"] else { throw fail(node, "generator needs a kind") }
            kind = try string(k)
        } else {
            kind = try string(node)
        }
        kind = kind.replacingOccurrences(of: "-", with: "_")
        switch kind {
        case "heart_rate":
            return .heartRate
        case "battery":
            return .battery(start: try m["start"].map { n throws(ScenarioError) in try integer(n, in: 0...100) } ?? 100)
        case "temperature":
            return .temperature(center: try m["center"].map { n throws(ScenarioError) in try number(n) } ?? 21.5)
        case "humidity":
            return .humidity(center: try m["center"].map { n throws(ScenarioError) in try number(n) } ?? 45)
        case "counter":
            let width = try m["bytes"].map { n throws(ScenarioError) in try integer(n, in: 1...8) } ?? 1
            let start = try m["start"].map { n throws(ScenarioError) in try integer(n, in: 0...Int.max) } ?? 0
            let step = try m["step"].map { n throws(ScenarioError) in try integer(n, in: 0...Int.max) } ?? 1
            return .counter(width: width, start: UInt64(start), step: UInt64(step))
        case "random":
            return .random(length: try m["length"].map { n throws(ScenarioError) in try integer(n, in: 0...512) } ?? 4)
        case "cycle":
            guard let v = m["values"] else { throw fail(node, "cycle generator needs values") }
            return .cycle(try sequence(v, "values").map { x throws(ScenarioError) in try bytes(x) })
        default:
            throw fail(node, "unknown generator \(kind) (heart_rate, battery, temperature, humidity, counter, random, cycle)")
        }
    }
}
