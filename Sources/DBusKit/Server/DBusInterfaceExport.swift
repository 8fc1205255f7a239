/// One interface of an exported object: its properties, methods and (for introspection) signals.
public struct DBusInterfaceExport: Sendable {
    /// The interface name, e.g. `org.bluez.Device1`.
    public var name: String
    /// Initial property values, as plain values (not wrapped in `.variant`).
    public var properties: [String: DBusValue]
    /// Methods by name.
    public var methods: [String: DBusMethod]
    /// Signals by name with their signature; used for introspection only.
    public var signals: [String: DBusSignature]
    /// Called for `Properties.Set`. `nil` makes every property read-only. On success the server
    /// stores the value and emits `PropertiesChanged`; throw a ``DBusError`` to refuse.
    public var setProperty: (@Sendable (_ path: String, _ name: String, _ value: DBusValue) throws(DBusError) -> Void)?

    /// Creates an interface description.
    public init(
        name: String, properties: [String: DBusValue] = [:], methods: [String: DBusMethod] = [:],
        signals: [String: DBusSignature] = [:],
        setProperty: (@Sendable (String, String, DBusValue) throws(DBusError) -> Void)? = nil
    ) {
        self.name = name
        self.properties = properties
        self.methods = methods
        self.signals = signals
        self.setProperty = setProperty
    }
}

/// An exported method.
public struct DBusMethod: Sendable {
    /// The argument signature; a call with other argument types gets `InvalidArgs`.
    public var inSignature: DBusSignature
    /// The reply signature (for introspection).
    public var outSignature: DBusSignature
    /// Runs the method. Throw a ``DBusError`` to reply with that error; any other error
    /// becomes `org.freedesktop.DBus.Error.Failed`.
    public var handler: @Sendable (DBusMethodInvocation) async throws -> [DBusValue]
    /// Runs once the reply to a call the handler completed was queued on the connection (or
    /// dropped: the caller wanted none, or it could not be marshalled), with the values the
    /// handler returned. The place to close file descriptors the reply passed (`.unixFD`:
    /// libdbus sent duplicates of them) or to emit what must follow the reply.
    public var afterReply: (@Sendable ([DBusValue]) -> Void)?

    /// Creates a method.
    public init(
        in inSignature: DBusSignature = "", out outSignature: DBusSignature = "",
        afterReply: (@Sendable ([DBusValue]) -> Void)? = nil,
        _ handler: @escaping @Sendable (DBusMethodInvocation) async throws -> [DBusValue]
    ) {
        self.inSignature = inSignature
        self.outSignature = outSignature
        self.afterReply = afterReply
        self.handler = handler
    }
}

/// A method call as an exported method sees it.
public struct DBusMethodInvocation: Sendable {
    /// The caller's unique name.
    public var sender: String
    /// The object called.
    public var path: String
    /// The interface.
    public var interface: String
    /// The method name.
    public var member: String
    /// The arguments.
    public var arguments: [DBusValue]
}
