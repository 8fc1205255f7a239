import BridgeCore

/// What a peripheral session reacts to, in arrival order.
package enum SessionInput<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// `Device1.Connected` changed.
    case connectedChanged(Bool)
    /// `Device1.ServicesResolved` changed.
    case servicesResolved(Bool)
    /// A GATT service or characteristic object of the device appeared or vanished.
    case gattObjectsChanged
    /// BlueZ removed the device object: the session ends.
    case deviceRemoved
    /// Connect now (a stored peripheral at start).
    case connectRequested
    /// `bridge/request/reconnect`: drop the link; the policy reconnects.
    case reconnectRequested
    /// A `/set` or `/get` command.
    case command(PendingCommand<Instant>)
    /// An advertisement brought the device online, or decoded values with new names (from
    /// ``AdvertisementRouter``; advertisement sessions only).
    case advertised
    /// The `AcquireNotify` socket of a characteristic hung up.
    case notificationsReleased(characteristic: String)
    /// A notification of a characteristic a profile run armed (``SessionCore/Action/armNotify(path:attempt:)``),
    /// for connection attempt `attempt`.
    case notified(path: String, value: [UInt8], attempt: Int)
    /// A connection slot was granted.
    case slotGranted
    /// `Connect` returned, for connection attempt `attempt`.
    case connectFinished(attempt: Int, error: BluetoothError?)
    /// A GATT operation of the queue finished.
    case operationFinished(attempt: Int, GattOutcome<Instant>)
    /// `Pair` (and `Trusted`) returned, for connection attempt `attempt`.
    case pairFinished(attempt: Int, error: BluetoothError?)
    /// End the session: `forget` removes nothing from BlueZ here (the supervisor does); both
    /// disconnect and end the loop.
    case stop
}
