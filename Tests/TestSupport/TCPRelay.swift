import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP relay in front of a broker that a test can cut off, as a switch port or a Wi-Fi link goes away
/// while both ends keep their sockets: while ``silenced``, nothing is read from either side (the bytes wait in the
/// kernel, as TCP keeps them across a partition) and nothing is forwarded. With ``expireSilentAfter`` it also
/// stands in for a broker that ends a silent session at an exact time (EMQX, HiveMQ at 1.5 × keep-alive): once a
/// connection has forwarded nothing from its client for that long, the broker side is closed (the broker
/// publishes the will at once) while the client side stays open and silent.
///
/// ``events`` records, with the wall clock, the cut, each expiry and each close by a client, so that a test can
/// measure how long a client took to give up on its connection.
public final class TCPRelay: @unchecked Sendable {
    /// What happened, with `Date().timeIntervalSince1970`.
    public enum Event: Sendable, Equatable {
        /// ``silenced`` was set.
        case cut(at: Double)
        /// ``silenced`` was cleared.
        case healed(at: Double)
        /// The broker side of connection `id` was closed: nothing came from its client for ``expireSilentAfter``.
        case expired(connection: Int, at: Double)
        /// Client `id` closed its side.
        case clientClosed(connection: Int, at: Double)
    }

    /// `POLLRDHUP` (Linux; glibc declares it only under `_GNU_SOURCE`): the peer closed its side.
    private static let pollReadHangUp: Int32 = 0x2000

    private struct Connection {
        let id: Int
        var client: Int32
        var upstream: Int32
        /// When bytes of the client were last forwarded (monotonic seconds).
        var lastForwarded: Double
    }

    /// The port clients connect to.
    public let port: Int
    private let upstreamPort: Int
    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let lock = NSLock()
    private var connections: [Connection] = []
    private var nextID = 1
    private var silencedFlag = false
    private var expiry: Double?
    private var recorded: [Event] = []
    private var stopped = false
    private var thread: Thread?

    /// A relay on a free loopback port to `127.0.0.1:upstreamPort`, running at once.
    public init(upstreamPort: Int) throws {
        self.upstreamPort = upstreamPort
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = Self.loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            close(fd)
            throw RelayError(description: "the relay cannot listen: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw RelayError(description: "pipe failed") }
        wake = (pipeFDs[0], pipeFDs[1])
        let thread = Thread { [self] in run() }
        thread.name = "tcp-relay"
        self.thread = thread
        thread.start()
    }

    deinit {
        close(listener)
        close(wake.read)
        close(wake.write)
    }

    /// Whether the relay holds every byte (a partition). Setting it records ``Event/cut(at:)`` or ``Event/healed(at:)``.
    public var silenced: Bool {
        get { lock.withLock { silencedFlag } }
        set {
            lock.withLock {
                guard silencedFlag != newValue else { return }
                silencedFlag = newValue
                let now = Date().timeIntervalSince1970
                recorded.append(newValue ? .cut(at: now) : .healed(at: now))
            }
            poke()
        }
    }

    /// Close the broker side of a connection whose client sent nothing forwarded for this long (`nil`: never).
    public var expireSilentAfter: Duration? {
        get { lock.withLock { expiry.map { .milliseconds(Int64($0 * 1000)) } } }
        set {
            lock.withLock { expiry = newValue.map { Double($0.components.seconds) + Double($0.components.attoseconds) / 1e18 } }
            poke()
        }
    }

    /// What happened so far, in order.
    public var events: [Event] { lock.withLock { recorded } }

    /// Stops the relay and closes every connection.
    public func stop() {
        lock.withLock { stopped = true }
        poke()
        while thread?.isFinished == false { usleep(1000) }
    }

    private func poke() {
        var byte: UInt8 = 1
        _ = write(wake.write, &byte, 1)
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return address
    }

    private static func monotonic() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }

    // MARK: - The relay's thread

    private func run() {
        while true {
            let (silenced, expiry, stop) = lock.withLock { (silencedFlag, self.expiry, stopped) }
            if stop { break }
            expire(after: expiry)
            if !silenced { deliverCloses() }
            // While silenced, connection attempts wait in the listen queue (the handshake completes in the kernel).
            var fds = [
                pollfd(fd: wake.read, events: Int16(POLLIN), revents: 0),
                pollfd(fd: listener, events: silenced ? 0 : Int16(POLLIN), revents: 0),
            ]
            let snapshot = lock.withLock { connections }
            if !silenced {
                for connection in snapshot {
                    if connection.client >= 0 { fds.append(pollfd(fd: connection.client, events: Int16(POLLIN), revents: 0)) }
                    if connection.upstream >= 0 { fds.append(pollfd(fd: connection.upstream, events: Int16(POLLIN), revents: 0)) }
                }
            } else {
                // Only a client's close is seen while silenced (a peek: nothing is consumed).
                for connection in snapshot where connection.client >= 0 {
                    fds.append(pollfd(fd: connection.client, events: Int16(Self.pollReadHangUp), revents: 0))
                }
            }
            _ = poll(&fds, nfds_t(fds.count), expiry == nil ? 1000 : 50)
            if fds[0].revents != 0 {
                var buffer = [UInt8](repeating: 0, count: 64)
                _ = read(wake.read, &buffer, buffer.count)
            }
            if fds[1].revents & Int16(POLLIN) != 0 { accept() }
            for entry in fds.dropFirst(2) where entry.revents != 0 {
                service(fd: entry.fd, revents: entry.revents)
            }
        }
        lock.withLock {
            for connection in connections {
                if connection.client >= 0 { close(connection.client) }
                if connection.upstream >= 0 { close(connection.upstream) }
            }
            connections = []
        }
    }

    private func accept() {
        let client = Glibc.accept(listener, nil, nil)
        guard client >= 0 else { return }
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.loopback(port: upstreamPort)
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(upstream)
            close(client)
            return
        }
        lock.withLock {
            connections.append(Connection(id: nextID, client: client, upstream: upstream, lastForwarded: Self.monotonic()))
            nextID += 1
        }
    }

    private func service(fd: Int32, revents: Int16) {
        lock.withLock {
            defer { connections.removeAll { $0.client < 0 && $0.upstream < 0 } }
            guard let index = connections.firstIndex(where: { $0.client == fd || $0.upstream == fd }) else { return }
            let fromClient = connections[index].client == fd
            // Silenced since the poll began: nothing read from then on (the flag, not the poll's snapshot).
            if silencedFlag {
                guard fromClient, revents & Int16(Self.pollReadHangUp | POLLHUP | POLLERR) != 0 else { return }
                clientClosed(index)
                return
            }
            var buffer = [UInt8](repeating: 0, count: 16384)
            let count = read(fd, &buffer, buffer.count)
            guard count > 0 else {
                if fromClient { clientClosed(index) } else { closeUpstream(index) }
                return
            }
            let target = fromClient ? connections[index].upstream : connections[index].client
            if fromClient { connections[index].lastForwarded = Self.monotonic() }
            guard target >= 0 else { return }  // the broker side expired: what the client sends goes nowhere
            var offset = 0
            while offset < count {
                // MSG_NOSIGNAL: a side closed by its peer fails the send instead of raising SIGPIPE in the test process.
                let written = buffer.withUnsafeBytes { send(target, $0.baseAddress! + offset, count - offset, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { break }
                offset += written
            }
        }
    }

    /// The network is up: a side closed during the silence is seen closed by the other end.
    private func deliverCloses() {
        lock.withLock {
            for index in connections.indices {
                if connections[index].client < 0 && connections[index].upstream >= 0 {
                    close(connections[index].upstream)
                    connections[index].upstream = -1
                } else if connections[index].upstream < 0 && connections[index].client >= 0 {
                    close(connections[index].client)
                    connections[index].client = -1
                }
            }
            connections.removeAll { $0.client < 0 && $0.upstream < 0 }
        }
    }

    /// Closes the broker side of connections that forwarded nothing from their client for `expiry` seconds.
    private func expire(after expiry: Double?) {
        guard let expiry else { return }
        let now = Self.monotonic()
        lock.withLock {
            for index in connections.indices where connections[index].upstream >= 0 && now - connections[index].lastForwarded >= expiry {
                closeUpstream(index)
                recorded.append(.expired(connection: connections[index].id, at: Date().timeIntervalSince1970))
            }
            connections.removeAll { $0.client < 0 && $0.upstream < 0 }
        }
    }

    /// Lock held.
    private func closeUpstream(_ index: Int) {
        guard connections[index].upstream >= 0 else { return }
        close(connections[index].upstream)
        connections[index].upstream = -1
        if !silencedFlag, connections[index].client >= 0 {
            // The broker ended the session and the network is up: the client sees the close.
            close(connections[index].client)
            connections[index].client = -1
        }
    }

    /// Lock held.
    private func clientClosed(_ index: Int) {
        recorded.append(.clientClosed(connection: connections[index].id, at: Date().timeIntervalSince1970))
        close(connections[index].client)
        connections[index].client = -1
        if connections[index].upstream >= 0 && !silencedFlag {
            close(connections[index].upstream)
            connections[index].upstream = -1
        }
    }

    /// A relay that cannot start.
    public struct RelayError: Error, CustomStringConvertible {
        public var description: String
    }
}
