/// How a failed `Device1.Connect` is handled, by the class of BlueZ's error.
public enum ConnectErrorClass: Sendable, Hashable {
    /// `org.bluez.Error.Failed: le-connection-abort-by-local`: BlueZ gave up the
    /// attempt; wait for `Connected` to become false before retrying.
    case abortByLocal
    /// `org.bluez.Error.InProgress`: a connection attempt is already running;
    /// wait for `Connected` (or the connect timeout).
    case inProgress
    /// The device object is gone (`UnknownObject`, `DoesNotExist`): wait until it is discovered again.
    case notFound
    /// Anything else: retry after a backoff.
    case other

    /// Classifies a D-Bus error by name and message.
    ///
    /// `org.bluez.Error.AlreadyConnected` is not a failure: report it as
    /// ``DeviceConnectionStateMachine/Event/connectSucceeded``.
    public init(errorName: String, message: String) {
        if message.includes("le-connection-abort-by-local") {
            self = .abortByLocal
        } else if errorName == "org.bluez.Error.InProgress" {
            self = .inProgress
        } else if errorName == "org.freedesktop.DBus.Error.UnknownObject"
            || errorName == "org.freedesktop.DBus.Error.UnknownMethod"
            || errorName == "org.bluez.Error.DoesNotExist"
        {
            self = .notFound
        } else {
            self = .other
        }
    }
}
