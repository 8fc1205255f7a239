import BridgeBase
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
final class NotificationSockets: PollParticipant, @unchecked Sendable {
    private struct Entry {
        var fd: Int32
        var path: String
    }
    private struct State {
        var entries: [Int32: Entry] = [:]
        var handler: BlueZClient.ValueHandler?
        var onClosed: (@Sendable (String) -> Void)?
        /// Bumped on every change: the loop rebuilds its list only then.
        var version = 0
    }

    private let state = Mutex(State())
    let loop: PollLoop
    // Loop thread only:
    private var polled: [Entry] = []
    private var polledVersion = -1
    private var handler: BlueZClient.ValueHandler?
    private var onClosed: (@Sendable (String) -> Void)?
    /// One receive buffer for every packet (an ATT value is at most 512 bytes).
    private var buffer = [UInt8](repeating: 0, count: 1024)

    init(loop: PollLoop) {
        self.loop = loop
    }

    /// Where values go (the client's value handler).
    func setHandler(_ handler: BlueZClient.ValueHandler?) {
        state.withLock { s in
            s.handler = handler
            s.version &+= 1
        }
    }

    /// Called with the characteristic path when its socket hung up (on the loop's thread).
    func setOnClosed(_ onClosed: (@Sendable (String) -> Void)?) {
        state.withLock { s in
            s.onClosed = onClosed
            s.version &+= 1
        }
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

    /// Whether `path` has a socket.
    func has(path: String) -> Bool {
        state.withLock { s in s.entries.values.contains { $0.path == path } }
    }

    /// Sockets open.
    var count: Int { state.withLock { $0.entries.count } }

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

    /// Closes on the loop's thread, never under its poll; at once when the loop does not run.
    private func closeOnLoop(_ fds: [Int32]) {
        guard !fds.isEmpty else { return }
        if loop.isCurrentThread || !loop.isRunning {
            for fd in fds { close(fd) }
        } else {
            loop.execute { for fd in fds { close(fd) } }
        }
    }

    // MARK: PollParticipant (loop thread)

    func prepare(_ turn: inout PollLoop.Turn) {
        let changed = state.withLock { s -> Bool in
            guard s.version != polledVersion else { return false }
            polledVersion = s.version
            polled = Array(s.entries.values)
            handler = s.handler
            onClosed = s.onClosed
            return true
        }
        _ = changed
        for e in polled { turn.watch(e.fd, events: Int16(POLLIN)) }
    }

    func handle(_ ready: UnsafeBufferPointer<pollfd>, nowMs: Int64) {
        guard ready.count == polled.count else { return }
        var hungUp: [Entry] = []
        for (i, p) in ready.enumerated() where p.revents != 0 {
            let entry = polled[i]
            let hangUp = p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0
            if p.revents & Int16(POLLIN) != 0 { drain(entry, hungUp: hangUp) }
            if hangUp { hungUp.append(entry) }
        }
        for entry in hungUp { closed(entry) }
    }

    /// Reads every packet waiting. An empty packet is an empty value (a characteristic may
    /// notify zero bytes), so a 0 from `recv` means the end only with a hang-up.
    private func drain(_ entry: Entry, hungUp: Bool) {
        // Bounded: a peer that closed between the poll and here reads as endless empty packets
        // until the next poll reports the hang-up; other sockets get their turn meanwhile.
        for _ in 0..<256 {
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
        close(entry.fd)
        onClosed?(entry.path)
    }

    func detached() {
        releaseAll()
    }
}
