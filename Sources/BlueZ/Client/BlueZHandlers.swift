/// Takes every characteristic value BlueZ reports (notifications, indications and the `Value`
/// updates after reads), straight from the D-Bus I/O thread: the characteristic's object path and
/// the bytes.
public typealias GattValueHandler = @Sendable (_ path: String, _ value: [UInt8]) -> Void

/// Takes every `Device1` change of `RSSI`, `ServiceData` or `ManufacturerData` (each advertisement
/// BlueZ reports while discovering or monitoring), from the D-Bus I/O thread. Returns true when it
/// took the report whole: a change of nothing else then yields no event (at 1,000
/// advertisements/s the event consumer would do nothing but skip them).
public typealias BlueZAdvertisementHandler = @Sendable (BlueZAdvertisement) -> Bool
