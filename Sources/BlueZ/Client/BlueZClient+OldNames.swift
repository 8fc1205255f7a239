import BridgeBase

/// The names these types had while they were nested in the client, kept while parallel work on
/// issue 16 still uses them. To be removed once every user says the new name.
extension BlueZClient {
    /// Old name of ``GattValueHandler``.
    public typealias ValueHandler = GattValueHandler
    /// Old name of ``BlueZAdvertisementHandler``.
    public typealias AdvertisementHandler = BlueZAdvertisementHandler
    /// Old name of ``AdvertisementMonitorPattern``.
    public typealias MonitorPattern = AdvertisementMonitorPattern
    /// Old name of ``GattWriteType``.
    public typealias WriteType = GattWriteType
}
