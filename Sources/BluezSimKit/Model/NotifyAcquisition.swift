/// The `AcquireNotify` session of a characteristic: bluetoothd's `chrc->notify_io` (gatt-client.c).
/// At most one per characteristic, and never next to `StartNotify` sessions.
struct NotifyAcquisition: Sendable {
    /// Tells acquisitions apart: a late step of one that ended does nothing.
    let id: UInt64
    /// The D-Bus unique name of the client that acquired.
    let owner: String
    /// The simulator's end of the socket; nil while the CCC write (or the resolve) is pending.
    var socket: NotifySocket?
    /// The notification is registered: false once the owner left the bus (bluetoothd then
    /// unregisters it, but keeps the socket, and `NotifyAcquired` true, until the socket hangs up).
    var subscribed = true
    /// `NotifyAcquired: true` was signalled (after the reply).
    var announced = false

    /// Values go to the socket.
    var flowing: Bool { socket != nil && subscribed }
}
