import BridgeBase
import DBusKit
import Foundation
import YAMLKit

/// Loads a ``Scenario`` from YAML, rejecting unknown keys and reporting `file:line:column` on errors.
public enum ScenarioLoader {
    /// Reads and parses the scenario file at `path`.
    public static func load(path: String) throws(ScenarioError) -> Scenario {
        let text: String
        do {
            text = try String(contentsOfFile: path, encoding: .utf8)
        } catch {
            throw ScenarioError(code: .unreadable, file: path, message: "cannot read: \(error.localizedDescription)")
        }
        return try parse(text, file: path)
    }

    /// Parses scenario YAML `text`; `file` names it in errors.
    public static func parse(_ text: String, file: String = "<scenario>") throws(ScenarioError) -> Scenario {
        let root: Node?
        do {
            root = try YAMLParser.compose(text)
        } catch {
            throw syntaxError(error, file: file)
        }
        guard let root else {
            throw ScenarioError(code: .invalid, file: file, message: "empty scenario")
        }
        return try ScenarioReader(file: file).scenario(root)
    }
}

extension ScenarioLoader {
    /// A libyaml error with its position as `file:line:column`.
    static func syntaxError(_ error: YAMLError, file: String) -> ScenarioError {
        let what = [error.context?.text, error.problem].compactMap { $0 }.filter { !$0.isEmpty }.joined(separator: ": ")
        guard let mark = error.mark else {
            return ScenarioError(code: .syntax, file: file, message: "\(error)")
        }
        return ScenarioError(code: .syntax, file: file, line: mark.line, column: mark.column, message: what)
    }
}

/// A node of the scenario's YAML tree.
typealias Node = YAMLNode

/// The node-walking parser behind ``ScenarioLoader``.
struct ScenarioReader {
    let file: String

    static let flagNames: Set<String> = [
        "broadcast", "read", "write-without-response", "write", "notify", "indicate",
        "authenticated-signed-writes", "extended-properties", "reliable-write", "writable-auxiliaries",
        "encrypt-read", "encrypt-write", "encrypt-notify", "encrypt-indicate", "encrypt-authenticated-read",
        "encrypt-authenticated-write", "encrypt-authenticated-notify", "encrypt-authenticated-indicate",
        "secure-read", "secure-write", "secure-notify", "secure-indicate", "authorize",
    ]

    // MARK: - Top level

    func scenario(_ root: Node) throws(ScenarioError) -> Scenario {
        let m = try mapping(root, "scenario", keys: ["settings", "adapters", "devices"])
        var settings = ScenarioSettings()
        if let s = m["settings"] { settings = try self.settings(s) }
        var adapters: [AdapterSpec] = []
        if let list = m["adapters"] {
            for (i, node) in try sequence(list, "adapters").enumerated() {
                adapters.append(try adapter(node, index: i))
            }
        } else {
            adapters = [AdapterSpec(name: "hci0", address: "00:1A:7D:DA:71:10")]
        }
        guard !adapters.isEmpty else { throw fail(m["adapters"], "at least one adapter is needed") }
        var seenAdapters = Set<String>()
        for (i, a) in adapters.enumerated() where !seenAdapters.insert(a.name).inserted {
            throw fail(m["adapters"].flatMap { try? sequence($0, "adapters")[i] }, "duplicate adapter \(a.name)")
        }
        var devices: [PeripheralSpec] = []
        var seenAddresses = Set<String>()
        if let list = m["devices"] {
            for node in try sequence(list, "devices") {
                for d in try peripherals(node, defaultAdapter: adapters[0].name, settings: settings) {
                    guard seenAdapters.contains(d.adapter) else {
                        throw fail(node, "unknown adapter \(d.adapter)")
                    }
                    guard seenAddresses.insert(d.adapter + "/" + d.address).inserted else {
                        throw fail(node, "duplicate device address \(d.address)")
                    }
                    devices.append(d)
                }
            }
        }
        return Scenario(settings: settings, adapters: adapters, devices: devices)
    }

    func settings(_ node: Node) throws(ScenarioError) -> ScenarioSettings {
        let m = try mapping(node, "settings", keys: [
            "advertise_delay", "advertise_jitter", "rssi_interval", "temporary_timeout", "connect_delay",
            "resolve_delay", "resolve_delay_cached", "gatt_export_time", "gatt_objects_first", "signal_connected",
            "disconnect_delay", "pairing_failure_delay", "connect_timeout", "mtu", "strict_write_command", "seed",
        ])
        var s = ScenarioSettings()
        if let n = m["advertise_delay"] { s.advertiseDelay = try duration(n) }
        if let n = m["advertise_jitter"] { s.advertiseJitter = try duration(n) }
        if let n = m["rssi_interval"] { s.rssiInterval = try positiveDuration(n) }
        if let n = m["temporary_timeout"] { s.temporaryTimeout = try duration(n) }
        if let n = m["connect_delay"] { s.connectDelay = try duration(n) }
        if let n = m["resolve_delay"] { s.resolveDelay = try duration(n) }
        if let n = m["resolve_delay_cached"] { s.resolveDelayCached = try duration(n) }
        if let n = m["gatt_export_time"] { s.gattExportTime = try duration(n) }
        if let n = m["gatt_objects_first"] { s.gattObjectsFirst = try bool(n) }
        if let n = m["signal_connected"] { s.signalConnected = try bool(n) }
        if let n = m["pairing_failure_delay"] { s.pairingFailureDelay = try duration(n) }
        if let n = m["disconnect_delay"] { s.disconnectDelay = try duration(n) }
        if let n = m["connect_timeout"] { s.connectTimeout = try duration(n) }
        if let n = m["mtu"] { s.mtu = try mtu(n) }
        if let n = m["strict_write_command"] { s.strictWriteCommand = try bool(n) }
        if let n = m["seed"] { s.seed = UInt64(try integer(n, in: 0...Int.max)) }
        return s
    }

    func adapter(_ node: Node, index: Int) throws(ScenarioError) -> AdapterSpec {
        let m = try mapping(node, "adapter", keys: [
            "name", "address", "system_name", "alias", "powered", "discoverable", "pairable", "class",
        ])
        let name = try m["name"].map { n throws(ScenarioError) in try string(n) } ?? "hci\(index)"
        guard !name.isEmpty, name.utf8.allSatisfy({ isPathChar($0) }) else {
            throw fail(m["name"], "adapter name must be letters, digits or _")
        }
        let address = try m["address"].map { n throws(ScenarioError) in try self.address(n) }
            ?? String(format: "00:1A:7D:DA:71:%02X", 0x10 + index)
        let systemName = try m["system_name"].map { n throws(ScenarioError) in try string(n) } ?? "bluez-sim"
        var spec = AdapterSpec(name: name, address: address, systemName: systemName)
        if let n = m["alias"] { spec.alias = try string(n) }
        if let n = m["powered"] { spec.powered = try bool(n) }
        if let n = m["discoverable"] { spec.discoverable = try bool(n) }
        if let n = m["pairable"] { spec.pairable = try bool(n) }
        if let n = m["class"] { spec.deviceClass = UInt32(try integer(n, in: 0...0xff_ffff)) }
        return spec
    }

    // MARK: - Devices

    /// `broadcast: {kind: bthome_v2, interval: 1s, rate: 100, bindkey: "…", button_every: 5,
    /// temperature: 21.5, humidity: 45, battery: 91}`.
    func broadcast(_ node: Node) throws(ScenarioError) -> BroadcastSpec {
        let m = try mapping(node, "broadcast", keys: [
            "kind", "interval", "rate", "bindkey", "button_every", "temperature", "humidity", "battery",
        ])
        guard let kindNode = m["kind"] else { throw fail(node, "broadcast needs a kind (bthome_v2, pvvx, atc1441)") }
        let word = try string(kindNode)
        guard let kind = BroadcastSpec.Kind(rawValue: word) else {
            throw fail(kindNode, "unknown broadcast kind '\(word)' (bthome_v2, pvvx, atc1441)")
        }
        var spec = BroadcastSpec(kind: kind)
        if let n = m["interval"] { spec.interval = try duration(n) }
        if let n = m["rate"] { spec.interval = .nanoseconds(1_000_000_000 / Int64(try integer(n, in: 1...100_000))) }
        if let n = m["bindkey"] {
            let key = try bytes(n)
            guard key.count == 16 else { throw fail(n, "bindkey must be 16 bytes (32 hex digits), not \(key.count)") }
            guard kind == .bthomeV2 else { throw fail(n, "bindkey is for kind bthome_v2") }
            spec.bindkey = key
        }
        if let n = m["button_every"] { spec.buttonEvery = try integer(n, in: 0...1_000_000) }
        if let n = m["temperature"] { spec.temperature = Double(try string(n)) ?? spec.temperature }
        if let n = m["humidity"] { spec.humidity = Double(try string(n)) ?? spec.humidity }
        if let n = m["battery"] { spec.battery = try integer(n, in: 0...100) }
        return spec
    }

    func peripherals(_ node: Node, defaultAdapter: String, settings: ScenarioSettings) throws(ScenarioError) -> [PeripheralSpec] {
        let m = try mapping(node, "device", keys: [
            "name", "address", "address_type", "adapter", "rssi", "tx_power", "appearance", "advertise",
            "manufacturer_data", "service_data", "advertising_flags", "known", "paired", "trusted", "in_range",
            "advertise_delay", "connect_delay", "resolve_delay", "resolve_delay_cached", "disconnect_delay", "mtu",
            "count", "services", "gap_name", "broadcast",
        ])
        guard let addressNode = m["address"] else { throw fail(node, "device needs an address") }
        var spec = PeripheralSpec(address: try address(addressNode))
        if let n = m["address_type"] {
            let t = try string(n)
            guard t == "public" || t == "random" else { throw fail(n, "address_type must be public or random") }
            spec.addressType = t
        }
        if let n = m["name"] { spec.name = try string(n) }
        spec.adapter = try m["adapter"].map { n throws(ScenarioError) in try string(n) } ?? defaultAdapter
        if let n = m["rssi"] { spec.rssi = Int16(try integer(n, in: -127...127)) }
        if let n = m["tx_power"] { spec.txPower = Int16(try integer(n, in: -127...127)) }
        if let n = m["appearance"] { spec.appearance = UInt16(try integer(n, in: 0...0xffff)) }
        if let n = m["manufacturer_data"] {
            for (k, v) in try pairs(n, "manufacturer_data") {
                spec.manufacturerData[UInt16(try integer(k, in: 0...0xffff))] = try bytes(v)
            }
        }
        if let n = m["service_data"] {
            for (k, v) in try pairs(n, "service_data") {
                spec.serviceData[try uuid(k)] = try bytes(v)
            }
        }
        if let n = m["advertising_flags"] { spec.advertisingFlags = try bytes(n) }
        if let n = m["known"] { spec.known = try bool(n) }
        if let n = m["paired"] { spec.paired = try bool(n) }
        if spec.paired { spec.known = true }
        if let n = m["trusted"] { spec.trusted = try bool(n) }
        if let n = m["in_range"] { spec.inRange = try bool(n) }
        if let n = m["advertise_delay"] { spec.advertiseDelay = try duration(n) }
        if let n = m["connect_delay"] { spec.connectDelay = try duration(n) }
        if let n = m["resolve_delay"] { spec.resolveDelay = try duration(n) }
        if let n = m["resolve_delay_cached"] { spec.resolveDelayCached = try duration(n) }
        if let n = m["gap_name"] { spec.gapName = try string(n) }
        if let n = m["disconnect_delay"] { spec.disconnectDelay = try duration(n) }
        if let n = m["mtu"] { spec.mtu = try mtu(n) }
        if let n = m["services"] {
            for s in try sequence(n, "services") { spec.services.append(try service(s)) }
        }
        if let n = m["broadcast"] { spec.broadcast = try broadcast(n) }
        if let n = m["advertise"] {
            spec.advertisedServices = try sequence(n, "advertise").map { s throws(ScenarioError) in try uuid(s) }
        } else {
            spec.advertisedServices = spec.services.filter(\.primary).map(\.uuid)
        }
        let count = try m["count"].map { n throws(ScenarioError) in try integer(n, in: 1...10_000) } ?? 1
        guard count > 1 else { return [spec] }
        // Copies: consecutive addresses; "%d" in the name becomes the 1-based copy number, else " <n>" is appended.
        let base = Self.addressValue(spec.address)
        return (0..<count).map { i in
            var copy = spec
            copy.address = Self.addressText((base &+ UInt64(i)) & 0xffff_ffff_ffff)
            if let name = spec.name {
                copy.name = name.contains("%d") ? name.replacingOccurrences(of: "%d", with: "\(i + 1)") : "\(name) \(i + 1)"
            }
            return copy
        }
    }

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
            "notify_delay", "descriptors",
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
        spec.faults = try faults(m)
        if let n = m["descriptors"] {
            for d in try sequence(n, "descriptors") {
                let dm = try mapping(d, "descriptor", keys: ["uuid", "value", "value_text", "flags"])
                guard let du = dm["uuid"] else { throw fail(d, "descriptor needs a uuid") }
                var desc = DescriptorSpec(uuid: try uuid(du))
                if let v = dm["value"] { desc.value = try bytes(v) }
                if let v = dm["value_text"] { desc.value = Array(try string(v).utf8) }
                if let f = dm["flags"] { desc.flags = try sequence(f, "flags").map { x throws(ScenarioError) in try string(x) } }
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

    // MARK: - Scalars

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

    private func isPathChar(_ c: UInt8) -> Bool {
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
