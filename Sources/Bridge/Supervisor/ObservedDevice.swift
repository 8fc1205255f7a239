import BlueZ

/// A managed device as `bridge/devices` and health show it: the registry's entry and BlueZ's
/// device object now, merged where both speak of the same thing.
struct ObservedDevice {
    var entry: DeviceRegistry.Entry
    /// BlueZ's device object; nil when it has none.
    var object: BlueZDevice?

    /// A link is up: the session's record, or BlueZ's `Connected` (BlueZ 5.66 does not always
    /// signal `Connected=true` after `Connect`, seen on the real stack; the session knows it from
    /// the Connect reply).
    var connected: Bool { entry.record.connected || (object?.connected ?? false) }

    /// BlueZ's RSSI; nil when it has none or reports 127, "no valid RSSI" on some controllers.
    var rssi: Int? { object?.rssi.flatMap { $0 == 127 ? nil : $0 } }
}

extension Supervisor {
    /// Every managed device with BlueZ's object of it, by segment.
    var observedDevices: [ObservedDevice] {
        ctx.registry.all.map { ObservedDevice(entry: $0, object: central.device($0.record.path)) }
    }
}
