import BridgeCore

/// The devices added at run time (SPEC §14), by topic segment: each entry as it came (the JSON a `device/add`
/// gave, published retained on `{base}/config/devices/{segment}` and kept in `devices_file`) and as decoded.
///
/// Pure bookkeeping: the supervisor core decides when entries come and go, and merges them with bridge.yaml's
/// devices (``merged(with:trackers:)``), which win over an entry of the same name or address.
package struct AddedDevices: Sendable, Equatable {
    /// One run-time device.
    package struct Entry: Sendable, Equatable {
        /// The entry as JSON (a `devices:` entry of bridge.yaml), without a request's `transaction`.
        package var json: JSONValue
        /// The entry decoded; its `name` is the segment.
        package var device: BridgeConfig.Device

        /// A value with these fields.
        package init(json: JSONValue, device: BridgeConfig.Device) {
            self.json = json
            self.device = device
        }

        /// The topic segment (the entry's required `name`).
        package var segment: String { device.name ?? "" }
    }

    /// The entries by segment.
    package private(set) var entries: [String: Entry] = [:]

    /// An empty book.
    package init() {}

    /// The entry with this segment.
    package subscript(segment: String) -> Entry? { entries[segment] }

    /// The segments, sorted.
    package var segments: [String] { entries.keys.sorted() }

    /// Every entry's JSON, by segment (what `devices_file` holds).
    package var jsonEntries: [JSONValue] { segments.compactMap { entries[$0]?.json } }

    /// Adds or replaces an entry; returns whether the book changed.
    @discardableResult
    package mutating func put(_ entry: Entry) -> Bool {
        guard entries[entry.segment] != entry else { return false }
        entries[entry.segment] = entry
        return true
    }

    /// Removes an entry; returns it.
    @discardableResult
    package mutating func remove(_ segment: String) -> Entry? {
        entries.removeValue(forKey: segment)
    }

    /// The segment of the entry for this address, if any.
    package func segment(address: BluetoothAddress) -> String? {
        entries.values.first { $0.device.match == .address(address) }?.segment
    }

    /// Why `device` cannot be served next to bridge.yaml's devices and trackers (the name or the address is
    /// taken), nil when it can.
    package static func conflict(
        _ device: BridgeConfig.Device, fixed: [BridgeConfig.Device], trackers: [BridgeConfig.Tracker]
    ) -> String? {
        let name = device.name ?? ""
        if fixed.contains(where: { $0.name == name }) { return "the name '\(name)' is taken by a device of bridge.yaml" }
        if trackers.contains(where: { $0.name == name }) { return "the name '\(name)' is taken by a tracker of bridge.yaml" }
        if case .address(let address) = device.match, fixed.contains(where: { $0.match == .address(address) }) {
            return "\(address) is configured in bridge.yaml"
        }
        return nil
    }

    /// bridge.yaml's devices followed by the entries that do not conflict with them (by segment).
    package func merged(with fixed: [BridgeConfig.Device], trackers: [BridgeConfig.Tracker]) -> [BridgeConfig.Device] {
        fixed + segments.compactMap { segment in
            guard let device = entries[segment]?.device, Self.conflict(device, fixed: fixed, trackers: trackers) == nil
            else { return nil }
            return device
        }
    }
}
