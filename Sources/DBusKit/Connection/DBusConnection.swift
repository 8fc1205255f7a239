import BridgeBase
import CDBus
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection to a D-Bus message bus.
///
/// Each connection's I/O runs on a ``PollLoop`` (its own, or one shared with other participants), which polls the socket and dispatches
/// incoming messages: replies resume the awaiting ``call(destination:path:interface:method:arguments:timeout:)``,
/// signals go to the ``signals(_:)`` streams that match, and method calls go to an exported
/// ``DBusObjectServer``. Every method is safe to call from any thread or task.
public final class DBusConnection: Sendable {
    let core: Core
    /// The logger given at creation.
    public let logger: Logger

    private init(raw: OpaquePointer, logger: Logger, loop: PollLoop?) {
        self.logger = logger
        self.core = Core(raw: raw, logger: logger, loop: loop)
        core.start()
    }

    /// The thread this connection's I/O, signal handlers and method handlers run on: the loop
    /// given at creation, or one of its own.
    public var pollLoop: PollLoop { core.pollLoop }

    deinit {
        core.shutdown()
    }

    /// Connects to the system bus: `DBUS_SYSTEM_BUS_ADDRESS` when set, else libdbus's default
    /// socket. With `loop`, the connection's I/O runs on that loop's thread (shared with other
    /// participants); without, on a loop of its own.
    public static func system(logger: Logger, loop: PollLoop? = nil) throws(DBusError) -> DBusConnection {
        DBusConnection.initThreads()
        var err = DBusError_C()
        dbus_error_init(&err)
        guard let raw = dbus_bus_get_private(DBUS_BUS_SYSTEM, &err) else {
            throw DBusError(consuming: &err, fallback: "cannot connect to the system bus")
        }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        return DBusConnection(raw: raw, logger: logger, loop: loop)
    }

    /// Connects to the bus at `address` (e.g. `unix:path=/tmp/bus`) and registers with it; `loop`
    /// as for ``system(logger:loop:)``.
    public static func connect(address: String, logger: Logger, loop: PollLoop? = nil) throws(DBusError) -> DBusConnection {
        DBusConnection.initThreads()
        var err = DBusError_C()
        dbus_error_init(&err)
        guard let raw = dbus_connection_open_private(address, &err) else {
            throw DBusError(consuming: &err, fallback: "cannot connect to \(address)")
        }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        guard dbus_bus_register(raw, &err) != 0 else {
            let e = DBusError(consuming: &err, fallback: "cannot register with the bus at \(address)")
            dbus_connection_close(raw)
            dbus_connection_unref(raw)
            throw e
        }
        return DBusConnection(raw: raw, logger: logger, loop: loop)
    }

    private static let threadsInitialized: Bool = {
        dbus_threads_init_default()
        return true
    }()

    static func initThreads() {
        _ = threadsInitialized
    }

    /// This connection's unique name on the bus, e.g. `:1.42`.
    public var uniqueName: String { core.uniqueName }

    /// Whether the connection is still open.
    public var isConnected: Bool { core.isConnected }

    /// Calls a method and returns its reply's arguments.
    ///
    /// - Throws: ``DBusError`` with the remote error's name and message; `org.freedesktop.DBus.Error.NoReply`
    ///   when no reply came within `timeout`; `org.freedesktop.DBus.Error.Disconnected` when the connection is gone.
    public func call(
        destination: String, path: String, interface: String, method: String,
        arguments: [DBusValue] = [], timeout: Duration = .seconds(25)
    ) async throws(DBusError) -> [DBusValue] {
        try DBusMessageCodec.validateBusName(destination)
        try DBusMessageCodec.validatePath(path)
        try DBusMessageCodec.validateInterface(interface)
        try DBusMessageCodec.validateMember(method)
        guard let msg = dbus_message_new_method_call(destination, path, interface, method) else {
            throw DBusError(DBusError.Name.noMemory, "cannot create a method call")
        }
        defer { dbus_message_unref(msg) }
        try DBusMessageCodec.append(arguments, to: msg)
        let ms = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        let result = await core.send(msg, timeoutMs: max(1, ms))
        return try result.get()
    }

    /// Signals that match `rule`. The match is added on the bus now and removed when the
    /// consumer stops iterating.
    public func signals(_ rule: DBusMatchRule) -> AsyncStream<DBusSignal> {
        let (stream, continuation) = AsyncStream<DBusSignal>.makeStream(bufferingPolicy: .unbounded)
        let id = core.addSubscription(rule, .stream(continuation))
        continuation.onTermination = { [core] _ in
            core.removeSubscription(id)
        }
        return stream
    }

    /// A subscription whose signals are delivered by calling a handler.
    public struct SignalSubscription: Sendable {
        let id: Int
        let core: Core

        /// Removes the match and stops calling the handler.
        public func cancel() {
            core.removeSubscription(id)
        }
    }

    /// Calls `handler` for every signal that matches `rule`, on the connection's I/O thread,
    /// in order, with no task hop: the lowest-latency way to follow signals. The handler must
    /// be quick and must not block. `onEnd` is called if the connection closes.
    ///
    /// `peek`, when given, sees each matching signal first, in place (``DBusArgumentReader``):
    /// when it returns true it took the signal, and `handler` is not called (nor are the
    /// arguments decoded into ``DBusValue``s for it).
    public func addSignalHandler(
        _ rule: DBusMatchRule, onEnd: @escaping @Sendable () -> Void = {}, peek: DBusSignalPeek? = nil,
        _ handler: @escaping @Sendable (DBusSignal) -> Void
    ) -> SignalSubscription {
        SignalSubscription(id: core.addSubscription(rule, .handler(handler, onEnd: onEnd, peek: peek)), core: core)
    }

    /// Sends a signal: fire and forget.
    public func emitSignal(path: String, interface: String, name: String, arguments: [DBusValue]) {
        do {
            try DBusMessageCodec.validatePath(path)
            try DBusMessageCodec.validateInterface(interface)
            try DBusMessageCodec.validateMember(name)
            guard let msg = dbus_message_new_signal(path, interface, name) else { return }
            defer { dbus_message_unref(msg) }
            try DBusMessageCodec.append(arguments, to: msg)
            core.sendNoReply(msg)
        } catch {
            logger.warning("cannot emit \(interface).\(name) on \(path): \(error)")
        }
    }

    /// Requests a well-known name; throws unless this connection becomes its primary owner.
    public func requestName(_ name: String) async throws(DBusError) {
        try DBusMessageCodec.validateBusName(name)
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", method: "RequestName",
            arguments: [.string(name), .uint32(UInt32(CDBUS_NAME_FLAG_DO_NOT_QUEUE))])
        guard let code = reply.first?.int, code == Int(CDBUS_REQUEST_NAME_REPLY_PRIMARY_OWNER) else {
            throw DBusError(DBusError.Name.failed, "could not own the name \(name) (reply \(reply.first?.int ?? -1))")
        }
    }

    /// Whether a name has an owner on the bus.
    public func nameHasOwner(_ name: String) async throws(DBusError) -> Bool {
        let reply = try await call(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", method: "NameHasOwner", arguments: [.string(name)])
        return reply.first?.bool ?? false
    }

    /// Closes the connection and stops its I/O thread. Pending calls fail with `Disconnected`.
    public func close() {
        core.shutdown()
    }

    /// Installs the handler for incoming method calls (used by ``DBusObjectServer``).
    func setMethodCallHandler(_ handler: @escaping @Sendable (DBusIncomingCall) -> Void) {
        core.setMethodCallHandler(handler)
    }
}

typealias DBusError_C = CDBus.DBusError

extension DBusError {
    /// Takes the contents of a libdbus error and frees it.
    init(consuming err: inout DBusError_C, fallback: String) {
        if dbus_error_is_set(&err) != 0 {
            let name = err.name.map { String(cString: $0) } ?? DBusError.Name.failed
            let message = err.message.map { String(cString: $0) } ?? fallback
            dbus_error_free(&err)
            self.init(name: name, message: message)
        } else {
            self.init(name: DBusError.Name.failed, message: fallback)
        }
    }

    /// The error carried by an error reply.
    init(reply: OpaquePointer) {
        let name = dbus_message_get_error_name(reply).map { String(cString: $0) } ?? DBusError.Name.failed
        var message = ""
        if case .string(let s)? = DBusMessageCodec.arguments(of: reply).first { message = s }
        self.init(name: name, message: message)
    }
}

/// A method call received by this connection, waiting for its reply.
final class DBusIncomingCall: @unchecked Sendable {
    private let message: OpaquePointer
    private let core: DBusConnection.Core
    let sender: String
    let path: String
    let interface: String
    let member: String
    let signature: String
    let arguments: [DBusValue]
    let noReplyExpected: Bool

    init(message: OpaquePointer, core: DBusConnection.Core) {
        dbus_message_ref(message)
        self.message = message
        self.core = core
        sender = dbus_message_get_sender(message).map { String(cString: $0) } ?? ""
        path = dbus_message_get_path(message).map { String(cString: $0) } ?? "/"
        interface = dbus_message_get_interface(message).map { String(cString: $0) } ?? ""
        member = dbus_message_get_member(message).map { String(cString: $0) } ?? ""
        signature = DBusMessageCodec.signature(of: message)
        arguments = DBusMessageCodec.arguments(of: message)
        noReplyExpected = dbus_message_get_no_reply(message) != 0
    }

    deinit {
        dbus_message_unref(message)
    }

    /// Sends a method return with `values`.
    func reply(_ values: [DBusValue]) {
        guard !noReplyExpected else { return }
        guard let r = dbus_message_new_method_return(message) else { return }
        defer { dbus_message_unref(r) }
        do {
            try DBusMessageCodec.append(values, to: r)
        } catch {
            replyError(DBusError(DBusError.Name.failed, "reply could not be marshalled: \(error)"))
            return
        }
        core.sendNoReply(r)
    }

    /// Sends an error reply.
    func replyError(_ error: DBusError) {
        guard !noReplyExpected else { return }
        let name = DBusMessageCodec.validateErrorName(error.name) ? error.name : DBusError.Name.failed
        guard let r = dbus_message_new_error(message, name, error.message) else { return }
        defer { dbus_message_unref(r) }
        core.sendNoReply(r)
    }
}
