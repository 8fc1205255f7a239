import BridgeBase
import CLinux
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The sockets `AcquireNotify` handed over, one per characteristic: BlueZ writes each
/// notification as one packet, which is read here on the D-Bus connection's ``PollLoop`` and
/// given to the value handler, never passing through dbus-daemon or libdbus. A hang-up (the link
/// went down, or BlueZ released the notification) closes the socket and is reported.
///
/// The sockets sit in an epoll set of their own, which the loop polls as one descriptor: with a
/// hundred peripherals a turn costs one `poll` of a few descriptors and one `epoll_wait` that
/// names the ready sockets, not a `poll` over every socket.
final class NotificationSockets: PollParticipant, @unchecked Sendable {
    private struct Entry {
        var fd: Int32
        var path: String
    }
    private struct State {
        var entries: [Int32: Entry] = [:]
        var handler: GattValueHandler?
        var onClosed: (@Sendable (String) -> Void)?
        /// Bumped on every change: the loop rebuilds its list only then.
        var version = 0
    }

    private let state = Mutex(State())
    let loop: PollLoop
    /// The epoll set of the sockets (`data.fd` names the socket).
    private let epollFD: Int32
    // Loop thread only:
    private var polledVersion = -1
    /// Socket → characteristic path, as of this turn.
    private var paths: [Int32: String] = [:]
    private var events = [epoll_event](repeating: epoll_event(), count: 64)
    private var handler: GattValueHandler?
    private var onClosed: (@Sendable (String) -> Void)?
    /// One receive buffer for every packet (an ATT value is at most 512 bytes).
    private var buffer = [UInt8](repeating: 0, count: 1024)

    init(loop: PollLoop) {
        self.loop = loop
        epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
    }

    deinit {
        close(epollFD)
    }

    private func watch(_ fd: Int32) {
        var event = epoll_event()
        event.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
        event.data.fd = fd
        _ = epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
    }

    private func unwatch(_ fd: Int32) {
        var event = epoll_event()
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event)
    }

    /// Where values go (the client's value handler).
    func setHandler(_ handler: GattValueHandler?) {
        state.withLock { s in
            s.handler = handler
            s.version &+= 1
        }
        loop.wake()
    }

    /// Called with the characteristic path when its socket hung up (on the loop's thread).
    func setOnClosed(_ onClosed: (@Sendable (String) -> Void)?) {
        state.withLock { s in
            s.onClosed = onClosed
            s.version &+= 1
        }
        loop.wake()
    }

    /// Takes ownership of `fd`, the notification socket of `path`; a socket the characteristic
    /// had before is closed.
    func add(fd: Int32, path: String) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        let old = state.withLock { s -> [Int32] in
            let old = s.entries.values.filter { $0.path == path }.map(\.fd)
            for fd in old { s.entries[fd] = nil }
            s.entries[fd] = Entry(fd: fd, path: path)
            s.version &+= 1
            return old
        }
        closeOnLoop(old)
        watch(fd)
        // The loop may sit in a poll that did not include the epoll set (it had no socket then):
        // without a wake the first packets would wait for unrelated traffic.
        loop.wake()
    }

    /// Closes the socket of `path` (BlueZ sees the hang-up and stops the notifications); returns
    /// whether there was one.
    @discardableResult
    func release(path: String) -> Bool {
        let fds = state.withLock { s -> [Int32] in
            let fds = s.entries.values.filter { $0.path == path }.map(\.fd)
            for fd in fds { s.entries[fd] = nil }
            if !fds.isEmpty { s.version &+= 1 }
            return fds
        }
        closeOnLoop(fds)
        return !fds.isEmpty
    }

    /// Closes every socket (BlueZ went away, or the client stops).
    func releaseAll() {
        let fds = state.withLock { s -> [Int32] in
            defer {
                s.entries.removeAll()
                s.version &+= 1
            }
            return Array(s.entries.keys)
        }
        closeOnLoop(fds)
    }

    /// Closes on the loop's thread, between two turns (never while a turn may read it); at once
    /// when the loop does not run.
    private func closeOnLoop(_ fds: [Int32]) {
        guard !fds.isEmpty else { return }
        if loop.isCurrentThread || !loop.isRunning {
            for fd in fds { unwatchAndClose(fd) }
        } else {
            loop.execute { [self] in for fd in fds { unwatchAndClose(fd) } }
        }
    }

    private func unwatchAndClose(_ fd: Int32) {
        unwatch(fd)
        close(fd)
    }

    // MARK: PollParticipant (loop thread)

    func prepare(_ turn: inout PollLoop.Turn) {
        state.withLock { s in
            guard s.version != polledVersion else { return }
            polledVersion = s.version
            paths.removeAll(keepingCapacity: true)
            for e in s.entries.values { paths[e.fd] = e.path }
            handler = s.handler
            onClosed = s.onClosed
        }
        if !paths.isEmpty { turn.watch(epollFD, events: Int16(POLLIN)) }
    }

    func handle(_ ready: UnsafeBufferPointer<pollfd>, nowMs: Int64) {
        guard ready.count == 1, ready[0].revents & Int16(POLLIN) != 0 else { return }
        let n = events.withUnsafeMutableBufferPointer { epoll_wait(epollFD, $0.baseAddress, Int32($0.count), 0) }
        guard n > 0 else { return }
        var hungUp: [Entry] = []
        for i in 0..<Int(n) {
            let fd = events[i].data.fd
            let flags = events[i].events
            // Closed by a release since the list was taken: nothing to read.
            guard let path = paths[fd] else { continue }
            let entry = Entry(fd: fd, path: path)
            let hangUp = flags & (EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue) != 0
            if flags & EPOLLIN.rawValue != 0 { drain(entry, hungUp: hangUp) }
            if hangUp { hungUp.append(entry) }
        }
        for entry in hungUp { closed(entry) }
    }

    /// Reads one packet, or with a hang-up every packet left. One is the common case: a socket
    /// with more stays ready (level-triggered) and is read again next turn, which costs less than
    /// a `recv` that finds nothing after every value. An empty packet is an empty value (a
    /// characteristic may notify zero bytes), so a 0 from `recv` means the end only with a
    /// hang-up.
    private func drain(_ entry: Entry, hungUp: Bool) {
        // Bounded: a peer that closed between the poll and here reads as endless empty packets.
        for _ in 0..<(hungUp ? 256 : 1) {
            let n = buffer.withUnsafeMutableBytes { recv(entry.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n < 0 || (n == 0 && hungUp) { return }
            handler?(entry.path, Array(buffer[0..<n]))
        }
    }

    private func closed(_ entry: Entry) {
        let ours = state.withLock { s -> Bool in
            guard s.entries[entry.fd]?.path == entry.path else { return false }
            s.entries[entry.fd] = nil
            s.version &+= 1
            return true
        }
        // Released meanwhile: whoever released it closed it.
        guard ours else { return }
        paths[entry.fd] = nil
        unwatchAndClose(entry.fd)
        onClosed?(entry.path)
    }

    func detached() {
        releaseAll()
    }
}
