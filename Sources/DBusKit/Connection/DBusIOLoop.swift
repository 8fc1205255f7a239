import BridgeBase
import CDBus
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// One connection's part of a ``PollLoop``: polls libdbus's watches, runs libdbus's timeouts and
/// drains dispatch on the loop's thread. Outgoing messages written from other threads wake the
/// loop (libdbus's wakeup-main and dispatch-status hooks), so a call's round trip is not held
/// back by a poll timeout.
final class DBusIOLoop: PollParticipant, @unchecked Sendable {
    /// A libdbus watch or timeout; only the loop's thread and libdbus's hooks touch it.
    private struct Handle: Hashable, @unchecked Sendable {
        let raw: OpaquePointer
    }
    private struct Timeout: Sendable {
        var timeout: Handle
        var deadline: Int64  // monotonic ms
    }
    private struct State: Sendable {
        var watches: [Handle] = []
        var timeouts: [Timeout] = []
        var attached = false
        var exited = false
    }

    private let state = Mutex(State())
    /// The thread this connection's I/O runs on.
    let loop: PollLoop
    /// Whether the connection started its own loop (stopped when it leaves it).
    private let ownsLoop: Bool
    /// The watches polled this turn, in the order of their descriptors.
    private var polled: [OpaquePointer] = []
    /// Called on the loop's thread after each poll to dispatch messages. Returns false to leave.
    private let onDispatch: @Sendable () -> Bool
    private let onExit: @Sendable () -> Void

    init(loop: PollLoop?, onDispatch: @escaping @Sendable () -> Bool, onExit: @escaping @Sendable () -> Void) {
        self.loop = loop ?? PollLoop(name: "dbus-io")
        ownsLoop = loop == nil
        self.onDispatch = onDispatch
        self.onExit = onExit
    }

    /// Wakes the poll.
    func wake() { loop.wake() }

    /// Whether the connection has left the loop.
    var hasExited: Bool { state.withLock { $0.exited } }

    /// Whether the caller is the loop's thread.
    var isCurrentThread: Bool { loop.isCurrentThread }

    /// Runs `job` on the loop's thread, between two turns; at once when the caller is that
    /// thread or the connection has left the loop (nothing of it is polled any more).
    func runOnLoop(_ job: @escaping @Sendable () -> Void) {
        if loop.isCurrentThread || hasExited { job() } else { loop.execute(job) }
    }

    // MARK: libdbus hooks (any thread, libdbus's lock may be held: never call back into libdbus here)

    func addWatch(_ w: OpaquePointer) {
        state.withLock { $0.watches.append(Handle(raw: w)) }
        wake()
    }

    func removeWatch(_ w: OpaquePointer) {
        state.withLock { $0.watches.removeAll { $0.raw == w } }
        wake()
    }

    func addTimeout(_ t: OpaquePointer) {
        let deadline = PollLoop.nowMs() + Int64(dbus_timeout_get_interval(t))
        state.withLock { $0.timeouts.append(Timeout(timeout: Handle(raw: t), deadline: deadline)) }
        wake()
    }

    func removeTimeout(_ t: OpaquePointer) {
        state.withLock { $0.timeouts.removeAll { $0.timeout.raw == t } }
        wake()
    }

    func toggleTimeout(_ t: OpaquePointer) {
        let deadline = PollLoop.nowMs() + Int64(dbus_timeout_get_interval(t))
        state.withLock { s in
            if let i = s.timeouts.firstIndex(where: { $0.timeout.raw == t }) {
                s.timeouts[i].deadline = deadline
            }
        }
        wake()
    }

    // MARK: Loop

    /// Joins the loop (starting it when the connection owns it).
    func start() {
        state.withLock { $0.attached = true }
        loop.add(self)
        if ownsLoop { loop.start() }
    }

    func prepare(_ turn: inout PollLoop.Turn) {
        polled.removeAll(keepingCapacity: true)
        // The watch accessors run under the mutex: libdbus frees a watch only after its remove
        // hook, which waits for the mutex (they take no libdbus lock, so this cannot deadlock).
        state.withLock { s in
            var next: Int64?
            for t in s.timeouts where dbus_timeout_get_enabled(t.timeout.raw) != 0 {
                next = min(next ?? t.deadline, t.deadline)
            }
            for handle in s.watches where dbus_watch_get_enabled(handle.raw) != 0 {
                let w = handle.raw
                let fd = dbus_watch_get_unix_fd(w)
                guard fd >= 0 else { continue }
                let flags = dbus_watch_get_flags(w)
                var events: Int16 = 0
                if flags & UInt32(CDBUS_WATCH_READABLE) != 0 { events |= Int16(POLLIN) }
                if flags & UInt32(CDBUS_WATCH_WRITABLE) != 0 { events |= Int16(POLLOUT) }
                turn.watch(fd, events: events)
                polled.append(w)
            }
            if let next { turn.wake(atMs: next) }
        }
    }

    func handle(_ ready: UnsafeBufferPointer<pollfd>, nowMs: Int64) {
        for (i, p) in ready.enumerated() where p.revents != 0 && i < polled.count {
            let w = polled[i]
            // The watch may have been removed meanwhile.
            guard state.withLock({ $0.watches.contains(Handle(raw: w)) }) else { continue }
            var flags: UInt32 = 0
            let r = p.revents
            if r & Int16(POLLIN) != 0 { flags |= UInt32(CDBUS_WATCH_READABLE) }
            if r & Int16(POLLOUT) != 0 { flags |= UInt32(CDBUS_WATCH_WRITABLE) }
            if r & Int16(POLLERR) != 0 { flags |= UInt32(CDBUS_WATCH_ERROR) }
            if r & Int16(POLLHUP) != 0 { flags |= UInt32(CDBUS_WATCH_HANGUP) }
            dbus_watch_handle(w, flags)
        }
        // Timeouts that are due.
        let now = PollLoop.nowMs()
        let due = state.withLock { s -> [Handle] in
            var out = [Handle]()
            for i in s.timeouts.indices where s.timeouts[i].deadline <= now {
                out.append(s.timeouts[i].timeout)
                s.timeouts[i].deadline = now + Int64(dbus_timeout_get_interval(s.timeouts[i].timeout.raw))
            }
            return out
        }
        for t in due {
            let stillThere = state.withLock { $0.timeouts.contains { $0.timeout == t } }
            if stillThere, dbus_timeout_get_enabled(t.raw) != 0 { _ = dbus_timeout_handle(t.raw) }
        }
        if !onDispatch() { leave() }
    }

    /// Leaves the loop (the connection is closed); ``hasExited`` turns true once detached.
    private func leave() {
        let was = state.withLock { s -> Bool in
            defer { s.attached = false }
            return s.attached
        }
        guard was else { return }
        loop.remove(self)
        if ownsLoop { loop.stop() }
    }

    func detached() {
        let first = state.withLock { s -> Bool in
            defer { s.exited = true }
            return !s.exited
        }
        guard first else { return }
        onExit()
        if ownsLoop { loop.stop() }
    }
}
