import CDBus
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The I/O thread of one connection: polls libdbus's watches plus a wake pipe, runs libdbus's
/// timeouts, and drains dispatch. Outgoing messages written from other threads wake it through
/// the pipe (libdbus's wakeup-main and dispatch-status hooks), so a call's round trip is not
/// held back by a poll timeout.
final class DBusIOLoop: @unchecked Sendable {
    /// A libdbus watch or timeout; only this loop's thread and libdbus's hooks touch it.
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
        var running = true
        var exited = false
    }

    private let state = Mutex(State())
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private var thread: pthread_t?
    /// Called on the I/O thread after each poll to dispatch messages. Returns false to stop.
    private let onDispatch: @Sendable () -> Bool
    private let onExit: @Sendable () -> Void

    init(onDispatch: @escaping @Sendable () -> Bool, onExit: @escaping @Sendable () -> Void) {
        var fds: [Int32] = [0, 0]
        _ = pipe(&fds)
        wakeRead = fds[0]
        wakeWrite = fds[1]
        _ = fcntl(wakeRead, F_SETFL, fcntl(wakeRead, F_GETFL) | O_NONBLOCK)
        _ = fcntl(wakeWrite, F_SETFL, fcntl(wakeWrite, F_GETFL) | O_NONBLOCK)
        _ = fcntl(wakeRead, F_SETFD, FD_CLOEXEC)
        _ = fcntl(wakeWrite, F_SETFD, FD_CLOEXEC)
        self.onDispatch = onDispatch
        self.onExit = onExit
    }

    deinit {
        close(wakeRead)
        close(wakeWrite)
    }

    static func nowMs() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000
    }

    /// Wakes the poll.
    func wake() {
        var b: UInt8 = 1
        _ = write(wakeWrite, &b, 1)
    }

    /// Asks the loop to stop after its current iteration.
    func stop() {
        state.withLock { $0.running = false }
        wake()
    }

    var isRunning: Bool { state.withLock { $0.running } }

    /// Whether the I/O thread has left its loop.
    var hasExited: Bool { state.withLock { $0.exited } }

    /// Whether the caller is the I/O thread.
    var isCurrentThread: Bool {
        guard let thread else { return false }
        return pthread_equal(thread, pthread_self()) != 0
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
        let deadline = Self.nowMs() + Int64(dbus_timeout_get_interval(t))
        state.withLock { $0.timeouts.append(Timeout(timeout: Handle(raw: t), deadline: deadline)) }
        wake()
    }

    func removeTimeout(_ t: OpaquePointer) {
        state.withLock { $0.timeouts.removeAll { $0.timeout.raw == t } }
        wake()
    }

    func toggleTimeout(_ t: OpaquePointer) {
        let deadline = Self.nowMs() + Int64(dbus_timeout_get_interval(t))
        state.withLock { s in
            if let i = s.timeouts.firstIndex(where: { $0.timeout.raw == t }) {
                s.timeouts[i].deadline = deadline
            }
        }
        wake()
    }

    // MARK: Thread

    func start(name: String) {
        let box = Unmanaged.passRetained(self)
        var tid = pthread_t()
        let rc = pthread_create(&tid, nil, { raw in
            let loop = Unmanaged<DBusIOLoop>.fromOpaque(raw!).takeRetainedValue()
            loop.run()
            return nil
        }, box.toOpaque())
        if rc == 0 {
            thread = tid
            pthread_detach(tid)
        } else {
            box.release()
        }
    }

    private func run() {
        var pfds = [pollfd]()
        var polled = [OpaquePointer]()
        while isRunning {
            pfds.removeAll(keepingCapacity: true)
            polled.removeAll(keepingCapacity: true)
            pfds.append(pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0))
            let (handles, nextDeadline) = state.withLock { s -> ([Handle], Int64?) in
                let enabled = s.timeouts.filter { dbus_timeout_get_enabled($0.timeout.raw) != 0 }
                return (s.watches, enabled.map(\.deadline).min())
            }
            for w in handles.map(\.raw) where dbus_watch_get_enabled(w) != 0 {
                let fd = dbus_watch_get_unix_fd(w)
                guard fd >= 0 else { continue }
                let flags = dbus_watch_get_flags(w)
                var events: Int16 = 0
                if flags & UInt32(CDBUS_WATCH_READABLE) != 0 { events |= Int16(POLLIN) }
                if flags & UInt32(CDBUS_WATCH_WRITABLE) != 0 { events |= Int16(POLLOUT) }
                pfds.append(pollfd(fd: fd, events: events, revents: 0))
                polled.append(w)
            }
            var timeoutMs: Int32 = -1
            if let d = nextDeadline {
                timeoutMs = Int32(clamping: max(0, d - Self.nowMs()))
            }
            let n = poll(&pfds, nfds_t(pfds.count), timeoutMs)
            if n < 0 && errno != EINTR { break }
            if pfds[0].revents != 0 {
                var buf = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &buf, 64) > 0 {}
            }
            if n > 0 {
                for i in 1..<pfds.count where pfds[i].revents != 0 {
                    let w = polled[i - 1]
                    // The watch may have been removed meanwhile.
                    let stillThere = state.withLock { $0.watches.contains(Handle(raw: w)) }
                    guard stillThere else { continue }
                    var flags: UInt32 = 0
                    let r = pfds[i].revents
                    if r & Int16(POLLIN) != 0 { flags |= UInt32(CDBUS_WATCH_READABLE) }
                    if r & Int16(POLLOUT) != 0 { flags |= UInt32(CDBUS_WATCH_WRITABLE) }
                    if r & Int16(POLLERR) != 0 { flags |= UInt32(CDBUS_WATCH_ERROR) }
                    if r & Int16(POLLHUP) != 0 { flags |= UInt32(CDBUS_WATCH_HANGUP) }
                    dbus_watch_handle(w, flags)
                }
            }
            // Timeouts that are due.
            let now = Self.nowMs()
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
            if !onDispatch() { break }
        }
        onExit()
        state.withLock { $0.exited = true }
    }
}
