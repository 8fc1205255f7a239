/// Which characteristics of a connected peripheral become topics (SPEC §3).
///
/// The GAP and GATT services (`1800`, `1801`: device name, appearance, service changed, database
/// hash, supported features) are BlueZ's business: not mapped unless the device's entry names the
/// characteristic (or lists the service in `only_services`). With `only_services`, only those
/// services are mapped, plus the characteristics named in `characteristics`.
public enum GattMapping {
    /// GAP (1800) and GATT (1801).
    public static let internalServices: Set<BluetoothUUID> = [BluetoothUUID(uuid16: 0x1800), BluetoothUUID(uuid16: 0x1801)]

    /// Whether `characteristic` of `service` is subscribed, read and published.
    public static func shouldMap(service: BluetoothUUID, characteristic: BluetoothUUID, device: BridgeConfig.Device?) -> Bool {
        if device?.characteristic(characteristic) != nil { return true }
        if let only = device?.onlyServices { return only.contains(service) }
        return !internalServices.contains(service)
    }

    /// Whether a service is listed in `bridge/devices`: GAP and GATT are not (unless
    /// `only_services` names them); with `only_services`, only those.
    public static func listsService(_ service: BluetoothUUID, device: BridgeConfig.Device?) -> Bool {
        if let only = device?.onlyServices { return only.contains(service) }
        return !internalServices.contains(service)
    }
}
