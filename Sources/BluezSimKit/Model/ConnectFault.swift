import DBusKit

/// Connection attempts that must fail (control `FailNextConnect`).
///
/// bluetoothd 5.66 answers a failed LE connection with `org.bluez.Error.Failed`
/// "le-connection-abort-by-local" (any error of the ATT socket connect, `att_connect_cb`); when the
/// link had come up before it failed (e.g. "Connection Failed to be Established"), clients first see
/// `Connected: true`, then the error reply, then `Connected: false`. Errors other than
/// `org.bluez.Error.Failed` (`InProgress`, `NotReady`, ...) are answered at once without any link activity.
struct ConnectFault: Sendable {
    /// The error the `Connect` call gets.
    var error: DBusError
    /// How many more attempts fail.
    var remaining: UInt32
    /// `Connected` flips true, then false after the error reply.
    var linkUp: Bool
    /// From `Connect` until the failure (nil: the scenario's connect delay; zero: at once).
    var delay: Duration?
    /// With ``linkUp``: from the error reply until `Connected` becomes false.
    var downAfter: Duration

    /// The default behaviour for `error`: link flash for "le-connection-abort-by-*", immediate for
    /// errors other than `org.bluez.Error.Failed`.
    init(error: DBusError, count: UInt32, linkUp: Bool? = nil, delay: Duration? = nil,
         downAfter: Duration = .milliseconds(100)) {
        self.error = error
        self.remaining = count
        let isFailed = error.name == "org.bluez.Error.Failed" || error.name == "org.bluez.Failed"
        self.linkUp = linkUp ?? (isFailed && error.message.hasPrefix("le-connection-abort-by-"))
        self.delay = delay ?? (isFailed ? nil : .zero)
        self.downAfter = downAfter
    }
}
