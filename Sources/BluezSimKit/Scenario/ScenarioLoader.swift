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
                for d in try peripherals(node, adapters: adapters.map(\.name), settings: settings) {
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
            "disconnect_delay", "pairing_failure_delay", "pairing_timeout", "connect_timeout", "mtu", "strict_write_command", "seed",
            "advertise_while_connected",
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
        if let n = m["pairing_timeout"] { s.pairingTimeout = try positiveDuration(n) }
        if let n = m["disconnect_delay"] { s.disconnectDelay = try duration(n) }
        if let n = m["connect_timeout"] { s.connectTimeout = try duration(n) }
        if let n = m["mtu"] { s.mtu = try mtu(n) }
        if let n = m["strict_write_command"] { s.strictWriteCommand = try bool(n) }
        if let n = m["seed"] { s.seed = UInt64(try integer(n, in: 0...Int.max)) }
        if let n = m["advertise_while_connected"] { s.advertiseWhileConnected = try bool(n) }
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
        if let n = m["temperature"] { spec.temperature = try number(n) }
        if let n = m["humidity"] { spec.humidity = try number(n) }
        if let n = m["battery"] { spec.battery = try integer(n, in: 0...100) }
        return spec
    }

    /// One device entry: one spec per copy (`count`) and adapter that hears it (`adapter` list or
    /// `rssi` mapping, see ``placements(adapter:rssi:adapters:)``).
    func peripherals(_ node: Node, adapters: [String], settings: ScenarioSettings) throws(ScenarioError) -> [PeripheralSpec] {
        let m = try mapping(node, "device", keys: [
            "name", "address", "address_type", "adapter", "rssi", "tx_power", "appearance", "advertise",
            "manufacturer_data", "service_data", "advertising_flags", "known", "paired", "trusted", "in_range",
            "advertise_delay", "connect_delay", "resolve_delay", "resolve_delay_cached", "disconnect_delay", "mtu",
            "count", "services", "gap_name", "broadcast", "advertise_while_connected", "pairing", "passkey",
            "irk", "rotate_every", "ibeacon", "replay", "advertising_interval", "exchanges",
        ])
        guard let addressNode = m["address"] else { throw fail(node, "device needs an address") }
        var spec = PeripheralSpec(address: try address(addressNode))
        if let n = m["address_type"] {
            let t = try string(n)
            guard t == "public" || t == "random" else { throw fail(n, "address_type must be public or random") }
            spec.addressType = t
        }
        if let n = m["name"] { spec.name = try string(n) }
        let placements = try self.placements(adapter: m["adapter"], rssi: m["rssi"], adapters: adapters)
        if let n = m["advertise_while_connected"] { spec.advertiseWhileConnected = try bool(n) }
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
        if let n = m["exchanges"] { spec.exchanges = try exchanges(n, services: spec.services) }
        if let n = m["broadcast"] { spec.broadcast = try broadcast(n) }
        spec.pairing = try pairing(m["pairing"], passkey: m["passkey"], device: node)
        if let n = m["advertise"] {
            spec.advertisedServices = try sequence(n, "advertise").map { s throws(ScenarioError) in try uuid(s) }
        } else {
            spec.advertisedServices = spec.services.filter(\.primary).map(\.uuid)
        }
        try privacy(m, device: node, into: &spec)
        try replay(m, device: node, into: &spec)
        let count = try m["count"].map { n throws(ScenarioError) in try integer(n, in: 1...10_000) } ?? 1
        if count > 1, spec.irk != nil { throw fail(m["count"], "a device with an irk cannot have copies (count)") }
        var copies = [spec]
        if count > 1 {
            // Copies: consecutive addresses; "%d" in the name becomes the 1-based copy number, else " <n>" is appended.
            let base = Self.addressValue(spec.address)
            copies = (0..<count).map { i in
                var copy = spec
                copy.address = Self.addressText((base &+ UInt64(i)) & 0xffff_ffff_ffff)
                if let name = spec.name {
                    copy.name = name.contains("%d") ? name.replacingOccurrences(of: "%d", with: "\(i + 1)") : "\(name) \(i + 1)"
                }
                return copy
            }
        }
        return copies.flatMap { copy in
            placements.map { adapter, rssi in
                var placed = copy
                placed.adapter = adapter
                placed.rssi = rssi
                return placed
            }
        }
    }

    /// The adapters that hear a device and its mean RSSI at each:
    /// - `rssi: -60` (or none: -60), `adapter: hci1` (or none: the first adapter): that one adapter;
    /// - `adapter: [hci0, hci1]`: each listed adapter, at `rssi` (a number, or a mapping giving each);
    /// - `rssi: {hci0: -60, hci1: -80}` without `adapter`: the adapters it names; with a
    ///   `default: -85` entry, every adapter (the named ones at their RSSI, the others at the default).
    /// An adapter without an RSSI for the device never hears it.
    func placements(adapter adapterNode: Node?, rssi rssiNode: Node?,
                    adapters: [String]) throws(ScenarioError) -> [(String, Int16)] {
        var perAdapter: [String: Int16] = [:]
        var fallback: Int16?
        var mapped = false
        if let n = rssiNode {
            if n.mapping != nil {
                mapped = true
                for (k, v) in try pairs(n, "rssi") {
                    let name = try string(k)
                    let value = Int16(try integer(v, in: -127...127))
                    if name == "default" {
                        fallback = value
                        continue
                    }
                    guard adapters.contains(name) else { throw fail(k, "unknown adapter \(name) in rssi") }
                    guard perAdapter.updateValue(value, forKey: name) == nil else { throw fail(k, "duplicate key \(name)") }
                }
            } else {
                fallback = Int16(try integer(n, in: -127...127))
            }
        }
        var names: [String]
        if let n = adapterNode {
            if let list = n.sequence {
                names = try list.items.map { item throws(ScenarioError) in try string(item) }
                guard !names.isEmpty else { throw fail(n, "adapter list is empty") }
                guard Set(names).count == names.count else { throw fail(n, "adapter listed twice") }
            } else {
                names = [try string(n)]
            }
            if let extra = perAdapter.keys.sorted().first(where: { !names.contains($0) }) {
                throw fail(rssiNode, "rssi names \(extra), which is not in the device's adapter list")
            }
        } else if mapped {
            names = fallback != nil ? adapters : adapters.filter { perAdapter[$0] != nil }
            guard !names.isEmpty else { throw fail(rssiNode, "rssi names no adapter") }
        } else {
            names = [adapters[0]]
        }
        var out: [(String, Int16)] = []
        for name in names {
            guard let rssi = perAdapter[name] ?? fallback ?? (mapped ? nil : -60) else {
                throw fail(rssiNode, "no RSSI for adapter \(name) (give it, or a default)")
            }
            out.append((name, rssi))
        }
        return out
    }

}
