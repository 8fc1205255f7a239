import CDBus
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A connection to a D-Bus message bus.
///
/// Each connection owns one I/O thread that polls the socket and a wake pipe and dispatches
/// incoming messages: replies resume the awaiting ``call(destination:path:interface:method:arguments:timeout:)``,
/// signals go to the ``signals(_:)`` streams that match, and method calls go to an exported
/// ``DBusObjectServer``. Every method is safe to call from any thread or task.
public final class DBusConnection: Sendable {
    let core: Core
    /// The logger given at creation.
    public let logger: Logger

    private init(raw: OpaquePointer, logger: Logger) {
        self.logger = logger
        self.core = Core(raw: raw, logger: logger)
        core.start()
    }

    deinit {
        core.shutdown()
    }

    /// Connects to the system bus: `DBUS_SYSTEM_BUS_ADDRESS` when set, else libdbus's default socket.
    public static func system(logger: Logger) throws(DBusError) -> DBusConnection {
        DBusConnection.initThreads()
        var err = DBusError_C()
        dbus_error_init(&err)
        guard let raw = dbus_bus_get_private(DBUS_BUS_SYSTEM, &err) else {
            throw DBusError(consuming: &err, fallback: "cannot connect to the system bus")
        }
        dbus_connection_set_exit_on_disconnect(raw, 0)
        return DBusConnection(raw: raw, logger: logger)
    }

    /// Connects to the bus at `address` (e.g. `unix:path=/tmp/bus`) and registers with it.
    public static func connect(address: String, logger: Logger) throws(DBusError) -> DBusConnection {
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
        return DBusConnection(raw: raw, logger: logger)
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
    public func addSignalHandler(
        _ rule: DBusMatchRule, onEnd: @escaping @Sendable () -> Void = {},
        _ handler: @escaping @Sendable (DBusSignal) -> Void
    ) -> SignalSubscription {
        SignalSubscription(id: core.addSubscription(rule, .handler(handler, onEnd: onEnd)), core: core)
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

extension DBusConnection {
    /// The state behind a connection: the libdbus handle, the I/O loop, subscriptions.
    final class Core: @unchecked Sendable {
        enum Sink {
            case stream(AsyncStream<DBusSignal>.Continuation)
            case handler(@Sendable (DBusSignal) -> Void, onEnd: @Sendable () -> Void)

            func deliver(_ s: DBusSignal) {
                switch self {
                case .stream(let c): c.yield(s)
                case .handler(let h, _): h(s)
                }
            }

            func finish() {
                switch self {
                case .stream(let c): c.finish()
                case .handler(_, let end): end()
                }
            }
        }
        struct Subscription {
            var rule: DBusMatchRule
            var sink: Sink
        }
        struct State {
            var nextID = 0
            var subscriptions: [Int: Subscription] = [:]
            var methodHandler: (@Sendable (DBusIncomingCall) -> Void)?
            var closed = false
            var closeRequested = false
            var connected = true
        }

        let raw: OpaquePointer
        let logger: Logger
        let uniqueName: String
        private let state = Locked(State())
        private var loop: DBusIOLoop!

        init(raw: OpaquePointer, logger: Logger) {
            self.raw = raw
            self.logger = logger
            uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        }

        var isConnected: Bool {
            state.withLock { !$0.closed && $0.connected }
        }

        func start() {
            let rawConn = raw
            loop = DBusIOLoop(
                onDispatch: { self.dispatchAll() },
                onExit: { self.loopExited() })
            let loopRef = Unmanaged.passUnretained(loop).toOpaque()
            dbus_connection_set_watch_functions(
                rawConn,
                { w, data in
                    Unmanaged<DBusIOLoop>.fromOpaque(data!).takeUnretainedValue().addWatch(w!)
                    return 1
                },
                { w, data in
                    Unmanaged<DBusIOLoop>.fromOpaque(data!).takeUnretainedValue().removeWatch(w!)
                },
                { _, data in
                    Unmanaged<DBusIOLoop>.fromOpaque(data!).takeUnretainedValue().wake()
                },
                loopRef, nil)
            dbus_connection_set_timeout_functions(
                rawConn,
                { t, data in
                    Unmanaged<DBusIOLoop>.fromOpaque(data!).takeUnretainedValue().addTimeout(t!)
                    return 1
                },
                { t, data in
                    Unmanaged<DBusIOLoop>.fromOpaque(data!).takeUnretainedValue().removeTimeout(t!)
                },
                { t, data in
                    Unmanaged<DBusIOLoop>.fromOpaque(data!).takeUnretainedValue().toggleTimeout(t!)
                },
                loopRef, nil)
            dbus_connection_set_wakeup_main_function(
                rawConn,
                { data in Unmanaged<DBusIOLoop>.fromOpaque(data!).takeUnretainedValue().wake() },
                loopRef, nil)
            dbus_connection_set_dispatch_status_function(
                rawConn,
                { _, status, data in
                    if status == DBUS_DISPATCH_DATA_REMAINS {
                        Unmanaged<DBusIOLoop>.fromOpaque(data!).takeUnretainedValue().wake()
                    }
                },
                loopRef, nil)
            let selfRef = Unmanaged.passUnretained(self).toOpaque()
            dbus_connection_add_filter(
                rawConn,
                { _, msg, data in
                    let core = Unmanaged<Core>.fromOpaque(data!).takeUnretainedValue()
                    return core.filter(msg!)
                },
                selfRef, nil)
            loop.start(name: "dbus-io")
        }

        /// Runs on the I/O thread after each poll.
        private func dispatchAll() -> Bool {
            if state.withLock({ $0.closeRequested }) {
                // Close on this thread: libdbus then removes its watches here, never under a poll.
                dbus_connection_flush(raw)
                dbus_connection_close(raw)
                markDisconnected()
                return false
            }
            while dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS {
                _ = dbus_connection_dispatch(raw)
            }
            if dbus_connection_get_is_connected(raw) == 0 {
                markDisconnected()
                return false
            }
            return true
        }

        private func loopExited() {
            // Keep the loop alive until the connection is freed; nothing else to do.
        }

        private func markDisconnected() {
            let subs = state.withLock { s -> [Subscription] in
                guard s.connected else { return [] }
                s.connected = false
                let all = Array(s.subscriptions.values)
                s.subscriptions.removeAll()
                return all
            }
            if !subs.isEmpty || true {
                logger.debug("D-Bus connection \(uniqueName) closed")
            }
            for s in subs { s.sink.finish() }
        }

        func shutdown() {
            let wasClosed = state.withLock { s -> Bool in
                let was = s.closed
                s.closed = true
                return was
            }
            guard !wasClosed else { return }
            guard let loop, !loop.hasExited, !loop.isCurrentThread else {
                dbus_connection_close(raw)
                markDisconnected()
                return
            }
            // The I/O thread closes the connection itself; wait (bounded) until it has.
            state.withLock { $0.closeRequested = true }
            loop.wake()
            var waited = 0
            while !loop.hasExited && waited < 2000 {
                usleep(1000)
                waited += 1
            }
            markDisconnected()
        }

        func setMethodCallHandler(_ h: @escaping @Sendable (DBusIncomingCall) -> Void) {
            state.withLock { $0.methodHandler = h }
        }

        // MARK: Messages in

        private func filter(_ msg: OpaquePointer) -> DBusHandlerResult {
            let type = dbus_message_get_type(msg)
            if type == Int32(CDBUS_MESSAGE_TYPE_SIGNAL) {
                routeSignal(msg)
                return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
            }
            if type == Int32(CDBUS_MESSAGE_TYPE_METHOD_CALL) {
                guard let handler = state.withLock({ $0.methodHandler }) else {
                    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
                }
                handler(DBusIncomingCall(message: msg, core: self))
                return DBUS_HANDLER_RESULT_HANDLED
            }
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }

        private func routeSignal(_ msg: OpaquePointer) {
            let path = dbus_message_get_path(msg).map { String(cString: $0) } ?? ""
            let interface = dbus_message_get_interface(msg).map { String(cString: $0) } ?? ""
            let member = dbus_message_get_member(msg).map { String(cString: $0) } ?? ""
            if interface == "org.freedesktop.DBus.Local" && member == "Disconnected" {
                markDisconnected()
                return
            }
            var arg0Cache: String?? = nil
            let arg0: () -> String? = {
                if let c = arg0Cache { return c }
                var iter = DBusMessageIter()
                var value: String? = nil
                if dbus_message_iter_init(msg, &iter) != 0,
                   dbus_message_iter_get_arg_type(&iter) == Int32(CDBUS_TYPE_STRING) {
                    var p: UnsafePointer<CChar>? = nil
                    dbus_message_iter_get_basic(&iter, &p)
                    value = p.map { String(cString: $0) }
                }
                arg0Cache = .some(value)
                return value
            }
            let targets = state.withLock { s -> [Sink] in
                var out = [Sink]()
                for sub in s.subscriptions.values
                where sub.rule.matches(path: path, interface: interface, member: member, arg0: arg0) {
                    out.append(sub.sink)
                }
                return out
            }
            guard !targets.isEmpty else { return }
            let signal = DBusSignal(
                sender: dbus_message_get_sender(msg).map { String(cString: $0) } ?? "",
                path: path, interface: interface, member: member,
                arguments: DBusMessageCodec.arguments(of: msg))
            for t in targets { t.deliver(signal) }
        }

        // MARK: Subscriptions

        func addSubscription(_ rule: DBusMatchRule, _ sink: Sink) -> Int {
            let id = state.withLock { s -> Int? in
                guard s.connected, !s.closed else { return nil }
                s.nextID += 1
                s.subscriptions[s.nextID] = Subscription(rule: rule, sink: sink)
                return s.nextID
            }
            guard let id else {
                sink.finish()
                return -1
            }
            // Non-blocking AddMatch: the bus handles it before any later message of ours.
            dbus_bus_add_match(raw, rule.ruleString, nil)
            loop.wake()
            return id
        }

        func removeSubscription(_ id: Int) {
            let rule = state.withLock { s -> DBusMatchRule? in
                s.subscriptions.removeValue(forKey: id)?.rule
            }
            guard let rule, isConnected else { return }
            dbus_bus_remove_match(raw, rule.ruleString, nil)
            loop.wake()
        }

        // MARK: Messages out

        func sendNoReply(_ msg: OpaquePointer) {
            guard isConnected else { return }
            _ = dbus_connection_send(raw, msg, nil)
        }

        func send(_ msg: OpaquePointer, timeoutMs: Int32) async -> Result<[DBusValue], DBusError> {
            guard isConnected else {
                return .failure(DBusError(DBusError.Name.disconnected, "the D-Bus connection is closed"))
            }
            return await withCheckedContinuation { (cont: CheckedContinuation<Result<[DBusValue], DBusError>, Never>) in
                var pending: OpaquePointer? = nil
                guard dbus_connection_send_with_reply(raw, msg, &pending, timeoutMs) != 0, let pending else {
                    cont.resume(returning: .failure(
                        DBusError(DBusError.Name.disconnected, "the D-Bus connection is closed")))
                    return
                }
                let box = PendingCall(continuation: cont)
                let ref = Unmanaged.passRetained(box).toOpaque()
                let ok = dbus_pending_call_set_notify(
                    pending,
                    { p, data in
                        Unmanaged<PendingCall>.fromOpaque(data!).takeUnretainedValue().complete(p!)
                    },
                    ref,
                    { data in Unmanaged<PendingCall>.fromOpaque(data!).release() })
                if ok == 0 {
                    Unmanaged<PendingCall>.fromOpaque(ref).release()
                    dbus_pending_call_cancel(pending)
                    dbus_pending_call_unref(pending)
                    box.fail(DBusError(DBusError.Name.noMemory, "dbus_pending_call_set_notify failed"))
                    return
                }
                // The reply may have arrived before the notify function was set.
                if dbus_pending_call_get_completed(pending) != 0 {
                    box.complete(pending)
                }
                dbus_pending_call_unref(pending)
                loop.wake()
            }
        }
    }

    /// One outstanding call: resumes its continuation exactly once.
    final class PendingCall: @unchecked Sendable {
        private let done = Locked(false)
        private let continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>

        init(continuation: CheckedContinuation<Result<[DBusValue], DBusError>, Never>) {
            self.continuation = continuation
        }

        private func claim() -> Bool {
            done.withLock { d in
                if d { return false }
                d = true
                return true
            }
        }

        func complete(_ pending: OpaquePointer) {
            guard claim() else { return }
            guard let reply = dbus_pending_call_steal_reply(pending) else {
                continuation.resume(returning: .failure(DBusError(DBusError.Name.noReply, "no reply")))
                return
            }
            defer { dbus_message_unref(reply) }
            if dbus_message_get_type(reply) == Int32(CDBUS_MESSAGE_TYPE_ERROR) {
                continuation.resume(returning: .failure(DBusError(reply: reply)))
            } else {
                continuation.resume(returning: .success(DBusMessageCodec.arguments(of: reply)))
            }
        }

        func fail(_ error: DBusError) {
            guard claim() else { return }
            continuation.resume(returning: .failure(error))
        }
    }
}
