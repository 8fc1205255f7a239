import CDBus
import Synchronization

/// One outstanding method call. It completes exactly once: with the reply, with
/// `Disconnected` when the connection dies, or with ``DBusError/Name/cancelled`` when its task is
/// cancelled (then libdbus forgets it too). Its continuation is never leaked: a call released
/// without an answer completes with `Disconnected`.
final class PendingCall: Sendable {
    typealias Outcome = Result<[DBusValue], DBusError>

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        /// The outcome when it came before the continuation was attached.
        var early: Outcome?
        var done = false
        /// libdbus's `DBusPendingCall*` (referenced) while it is outstanding, as its bits.
        var pending: UInt = 0
    }

    let id: Int
    private let state = Mutex(State())
    /// Runs a job on the connection's I/O thread (at once when that thread no longer serves the
    /// connection). libdbus frees a cancelled call's timeout with the call, and the loop may be
    /// about to fire that timeout: cancelling and dropping the last reference happen there.
    private let onLoop: @Sendable (@escaping @Sendable () -> Void) -> Void

    init(id: Int, onLoop: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void = { $0() }) {
        self.id = id
        self.onLoop = onLoop
    }

    deinit {
        let left = state.withLock { s -> (CheckedContinuation<Outcome, Never>?, UInt) in
            defer {
                s.continuation = nil
                s.pending = 0
            }
            return (s.continuation, s.pending)
        }
        if left.1 != 0 { dbus_pending_call_unref(OpaquePointer(bitPattern: left.1)) }
        left.0?.resume(returning: .failure(DBusError(DBusError.Name.disconnected, "the D-Bus connection is closed")))
    }

    var isDone: Bool { state.withLock { $0.done } }

    /// Attaches the awaiting continuation (resumed at once when the call already ended).
    func attach(_ continuation: CheckedContinuation<Outcome, Never>) {
        let early = state.withLock { s -> Outcome? in
            if let e = s.early {
                s.early = nil
                return e
            }
            s.continuation = continuation
            return nil
        }
        if let early { continuation.resume(returning: early) }
    }

    /// Remembers libdbus's pending call (adds a reference); false when the call already ended
    /// (then it is cancelled in libdbus at once).
    func setPending(_ pending: OpaquePointer) -> Bool {
        let stored = state.withLock { s -> Bool in
            guard !s.done else { return false }
            dbus_pending_call_ref(pending)
            s.pending = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pending)))
            return true
        }
        if !stored {
            // Keep it alive until the loop has cancelled it (the caller drops its reference).
            dbus_pending_call_ref(pending)
            let bits = UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pending)))
            onLoop {
                guard let p = OpaquePointer(bitPattern: bits) else { return }
                dbus_pending_call_cancel(p)
                dbus_pending_call_unref(p)
            }
        }
        return stored
    }

    /// The reply arrived (libdbus's notify function, or a reply that was there before it was set).
    func complete(_ pending: OpaquePointer) {
        guard claim() else { return }
        let outcome: Outcome
        if let reply = dbus_pending_call_steal_reply(pending) {
            if dbus_message_get_type(reply) == Int32(CDBUS_MESSAGE_TYPE_ERROR) {
                outcome = .failure(DBusError(reply: reply))
            } else {
                outcome = .success(DBusMessageCodec.arguments(of: reply))
            }
            dbus_message_unref(reply)
        } else {
            outcome = .failure(DBusError(DBusError.Name.noReply, "no reply"))
        }
        finish(outcome, cancelInLibdbus: false)
    }

    /// Ends the call with `error` (connection gone, or cancelled: then libdbus drops it too).
    func fail(_ error: DBusError, cancelInLibdbus: Bool = false) {
        guard claim() else { return }
        finish(.failure(error), cancelInLibdbus: cancelInLibdbus)
    }

    /// The task awaiting the call was cancelled.
    func cancel() {
        fail(DBusError(DBusError.Name.cancelled, "the call was cancelled"), cancelInLibdbus: true)
    }

    private func claim() -> Bool {
        state.withLock { s in
            if s.done { return false }
            s.done = true
            return true
        }
    }

    private func finish(_ outcome: Outcome, cancelInLibdbus: Bool) {
        let (continuation, pending) = state.withLock { s -> (CheckedContinuation<Outcome, Never>?, UInt) in
            defer {
                s.continuation = nil
                s.pending = 0
            }
            if s.continuation == nil { s.early = outcome }
            return (s.continuation, s.pending)
        }
        if pending != 0, let p = OpaquePointer(bitPattern: pending) {
            if cancelInLibdbus {
                onLoop {
                    guard let p = OpaquePointer(bitPattern: pending) else { return }
                    dbus_pending_call_cancel(p)
                    dbus_pending_call_unref(p)
                }
            } else {
                // Not cancelled: libdbus still holds the call while it is outstanding, so this is
                // not the last reference while its timeout can fire.
                dbus_pending_call_unref(p)
            }
        }
        continuation?.resume(returning: outcome)
    }
}
