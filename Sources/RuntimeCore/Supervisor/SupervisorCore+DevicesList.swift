import BridgeCore

/// `{base}/bridge/devices` (SPEC §4, §6), decided here: one object per managed device, from its record and the
/// last snapshot of its BlueZ object this core was handed (``SupervisorCore/managedSnapshots``). Published when it
/// differs from the last one published (or forced: a broker connection), and the `devices` request answers it.
extension SupervisorCore {
    /// The list as `bridge/devices` carries it, sorted by segment.
    package var devicesList: [JSONValue] {
        devices.values.sorted { $0.segment < $1.segment }.map { deviceEntry($0, object: managedSnapshots[$0.path]) }
    }

    /// Publishes `{base}/bridge/devices` unless it did not change since the last time (`force`: even then).
    package mutating func listDevices(force: Bool, _ out: inout [Action]) {
        let payload = JSONValue.array(devicesList).jsonBytes
        guard force || payload != lastDevicesPayload else { return }
        lastDevicesPayload = payload
        out.append(.sendDevices(payload))
    }

    /// Keeps the snapshots of the managed devices' objects the input's tree holds (the next list shows them).
    mutating func noteObjects(_ tree: Tree) {
        for (path, object) in tree.devices where devices[path] != nil { managedSnapshots[path] = object }
    }

    /// One device's entry: `connected` is the session's link or BlueZ's `Connected` (5.66 does not always signal
    /// `Connected=true` after `Connect`, seen on the real stack); `services` are the resolved segments while
    /// connected, else the advertised ones the configuration lists.
    private func deviceEntry(_ record: DeviceRecord, object: DeviceSnapshot?) -> JSONValue {
        let connected = record.connected || (object?.connected ?? false)
        var services: [JSONValue] = []
        if connected && !record.services.isEmpty {
            services = record.services.map { .string($0) }
        } else {
            let device = config.device(address: record.address, name: object?.name ?? object?.alias)
            for uuid in object?.uuids ?? [] where GattMapping.listsService(uuid, device: device) {
                services.append(.string(topics.serviceSegment(uuid, config: device)))
            }
        }
        var entry = JSONObject()
        entry.append("name", .string(record.segment))
        entry.append("address", .string(record.address.description))
        entry.append("address_type", .string(record.addressType))
        entry.append("connected", .bool(connected))
        entry.append("rssi", object?.validRSSI.map { .integer(Int64($0)) } ?? .null)
        entry.append("services", .array(services))
        entry.append("connection", .string(record.policy.name))
        entry.append("available", .bool(record.available))
        entry.append("adapter", .string(BlueZNames.adapterName(of: record.path)))
        entry.append("paired", .bool(object?.paired ?? false))
        entry.append("bonded", .bool(object?.bonded ?? false))
        // Known once the device told them (Device Information, its advertisement family, its profile).
        if let manufacturer = record.manufacturer { entry.append("manufacturer", .string(manufacturer)) }
        if let model = record.model { entry.append("model", .string(model)) }
        if let profile = record.profile { entry.append("profile", .string(profile)) }
        return .object(entry)
    }
}
