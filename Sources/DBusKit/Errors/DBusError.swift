/// An error from D-Bus: a remote error reply, or a local failure, with its D-Bus error name.
///
/// The ``name`` is the code: `org.bluez.Error.InProgress`, `org.freedesktop.DBus.Error.NoReply`, ...
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The D-Bus error name, e.g. `org.bluez.Error.Failed`.
    public var name: String
    /// The human-readable message that came with it.
    public var message: String

    /// Creates an error.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// Creates an error.
    public init(_ name: String, _ message: String) {
        self.init(name: name, message: message)
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }

    /// Well-known error names of `org.freedesktop.DBus.Error`.
    public enum Name {
        public static let failed = "org.freedesktop.DBus.Error.Failed"
        public static let noMemory = "org.freedesktop.DBus.Error.NoMemory"
        public static let serviceUnknown = "org.freedesktop.DBus.Error.ServiceUnknown"
        public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
        public static let noReply = "org.freedesktop.DBus.Error.NoReply"
        public static let timeout = "org.freedesktop.DBus.Error.Timeout"
        public static let disconnected = "org.freedesktop.DBus.Error.Disconnected"
        public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
        public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
        public static let unknownObject = "org.freedesktop.DBus.Error.UnknownObject"
        public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
        public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
        public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
        public static let accessDenied = "org.freedesktop.DBus.Error.AccessDenied"
        /// Not a bus error: DBusKit's own, for a call whose task was cancelled before the reply.
        public static let cancelled = "org.freedesktop.DBus.Error.Cancelled"
    }

    /// True for a call cancelled with its task.
    public var isCancelled: Bool { name == Name.cancelled }

    /// True for errors that mean the peer did not answer in time.
    public var isTimeout: Bool { name == Name.noReply || name == Name.timeout }
}
