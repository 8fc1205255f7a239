import BridgeBase
import CDBus
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension DBusConnection {
    /// The state behind a connection: the libdbus handle, the I/O loop, subscriptions.
    final class Core: @unchecked Sendable {
        enum Sink {
            case stream(AsyncStream<DBusSignal>.Continuation)
            case handler(@Sendable (DBusSignal) -> Void, onEnd: @Sendable () -> Void, peek: DBusSignalPeek?)

            func deliver(_ s: DBusSignal) {
                switch self {
                case .stream(let c): c.yield(s)
                case .handler(let h, _, _): h(s)
                }
            }

            func finish() {
                switch self {
                case .stream(let c): c.finish()
                case .handler(_, let end, _): end()
                }
            }

            /// Whether the sink's peek took the signal from the message (it is then not decoded for it).
            func took(_ path: String, _ interface: String, _ member: String, _ msg: OpaquePointer) -> Bool {
                guard case .handler(_, _, let peek?) = self else { return false }
                return peek(path, interface, member, DBusArgumentReader(message: msg))
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
            /// Calls awaiting their reply: failed with `Disconnected` when the connection dies.
            var calls: [Int: PendingCall] = [:]
            var nextCallID = 0
        }

        let raw: OpaquePointer
        let logger: Logger
        let uniqueName: String
        private let state = Mutex(State())
        private var loop: DBusIOLoop!

        /// The loop given at creation (nil: the connection runs its own).
        private let sharedLoop: PollLoop?

        init(raw: OpaquePointer, logger: Logger, loop: PollLoop?) {
            self.raw = raw
            self.logger = logger
            sharedLoop = loop
            uniqueName = dbus_bus_get_unique_name(raw).map { String(cString: $0) } ?? ""
        }

        /// The thread the connection's I/O and dispatch run on.
        var pollLoop: PollLoop { loop.loop }

        var isConnected: Bool {
            state.withLock { !$0.closed && $0.connected }
        }

        /// Calls awaiting their reply.
        var outstandingCalls: Int { state.withLock { $0.calls.count } }

        func start() {
            let rawConn = raw
            loop = DBusIOLoop(
                loop: sharedLoop,
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
            loop.start()
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
            // A message sent from another thread while this one held the I/O path (reading) was
            // queued with the write watch off: libdbus only woke us. An iteration that cannot block
            // writes it and turns the write watch on for what is left.
            if dbus_connection_has_messages_to_send(raw) != 0 { _ = dbus_connection_read_write(raw, 0) }
            while dbus_connection_get_dispatch_status(raw) == DBUS_DISPATCH_DATA_REMAINS {
                _ = dbus_connection_dispatch(raw)
            }
            if dbus_connection_get_is_connected(raw) == 0 {
                markDisconnected()
                return false
            }
            return true
        }

        /// The I/O loop no longer serves this connection (it was closed, or the loop stopped):
        /// nothing reads replies or fires timeouts from now on, so outstanding calls fail and
        /// new ones fail at once instead of waiting forever.
        private func loopExited() {
            markDisconnected()
        }

        private func markDisconnected() {
            let (subs, calls) = state.withLock { s -> ([Subscription], [PendingCall]) in
                let calls = Array(s.calls.values)
                s.calls.removeAll()
                guard s.connected else { return ([], calls) }
                s.connected = false
                let all = Array(s.subscriptions.values)
                s.subscriptions.removeAll()
                return (all, calls)
            }
            if !subs.isEmpty || !calls.isEmpty {
                logger.debug("D-Bus connection \(uniqueName) closed; \(calls.count) calls failed")
            }
            for s in subs { s.sink.finish() }
            // Every outstanding call completes: libdbus would not dispatch their errors any more.
            let error = DBusError(DBusError.Name.disconnected, "the D-Bus connection is closed")
            for call in calls { call.fail(error) }
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
            var targets = state.withLock { s -> [Sink] in
                var out = [Sink]()
                for sub in s.subscriptions.values
                where sub.rule.matches(path: path, interface: interface, member: member, arg0: arg0) {
                    out.append(sub.sink)
                }
                return out
            }
            targets.removeAll { $0.took(path, interface, member, msg) }
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
            let disconnected = DBusError(DBusError.Name.disconnected, "the D-Bus connection is closed")
            if Task.isCancelled { return .failure(DBusError(DBusError.Name.cancelled, "the call was cancelled")) }
            let io: DBusIOLoop = loop
            let call: PendingCall? = state.withLock { s in
                guard s.connected, !s.closed else { return nil }
                s.nextCallID += 1
                let call = PendingCall(id: s.nextCallID, onLoop: io.runOnLoop)
                s.calls[call.id] = call
                return call
            }
            guard let call else { return .failure(disconnected) }
            defer { _ = state.withLock { $0.calls.removeValue(forKey: call.id) } }
            let raw = self.raw
            return await withTaskCancellationHandler {
                await withCheckedContinuation { (cont: CheckedContinuation<PendingCall.Outcome, Never>) in
                    call.attach(cont)
                    guard !call.isDone else { return }
                    var pending: OpaquePointer? = nil
                    guard dbus_connection_send_with_reply(raw, msg, &pending, timeoutMs) != 0, let pending else {
                        call.fail(disconnected)
                        return
                    }
                    let ref = Unmanaged.passRetained(call).toOpaque()
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
                        call.fail(DBusError(DBusError.Name.noMemory, "dbus_pending_call_set_notify failed"))
                        return
                    }
                    if call.setPending(pending) {
                        // The reply may have arrived before the notify function was set.
                        if dbus_pending_call_get_completed(pending) != 0 { call.complete(pending) }
                    }
                    dbus_pending_call_unref(pending)
                    // The connection may have died meanwhile (its calls were failed before this one
                    // was sent).
                    if !isConnected { call.fail(disconnected) }
                    loop.wake()
                }
            } onCancel: {
                call.cancel()
            }
        }
    }
}
