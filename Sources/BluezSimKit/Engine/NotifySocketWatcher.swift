import BridgeBase
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Watches the simulator's end of every acquired notification socket on one ``PollLoop`` thread
/// (not a thread per socket), as bluetoothd's main loop watches them (`sock_io_new` in
/// gatt-client.c): a hang-up (the client closed its end) is reported once and the socket is
/// watched no more; a packet the client wrote is read and handed on (bluetoothd sends it to the
/// peripheral as a Write Without Response, `sock_read`).
final class NotifySocketWatcher: PollParticipant {
    /// Called on the poll thread when the client's end is gone.
    typealias HangUp = @Sendable (NotifySocket) -> Void
    /// Called on the poll thread with a packet the client wrote.
    typealias Packet = @Sendable (NotifySocket, [UInt8]) -> Void

    private struct State {
        var sockets: [NotifySocket] = []
        /// Sockets whose client shut its sending side down: only hang-ups are polled for then (the
        /// end of input would make every poll return at once).
        var inputEnded: Set<ObjectIdentifier> = []
        /// The sockets of the current poll, in the order they were given to it.
        var polled: [NotifySocket] = []
        var onHangUp: HangUp?
        var onPacket: Packet?
    }

    private let state = Mutex(State())

    /// Sets the callbacks (before the first socket is added).
    func setHandlers(hangUp: @escaping HangUp, packet: @escaping Packet) {
        state.withLock { s in
            s.onHangUp = hangUp
            s.onPacket = packet
        }
    }

    /// Watches `socket` from the next turn of the loop on.
    func add(_ socket: NotifySocket) {
        state.withLock { $0.sockets.append(socket) }
    }

    /// Stops watching `socket` (the caller closes it).
    func remove(_ socket: NotifySocket) {
        state.withLock { s in
            s.sockets.removeAll { $0 === socket }
            s.inputEnded.remove(ObjectIdentifier(socket))
        }
    }

    /// `POLLRDHUP` (Linux): the peer shut its sending side down.
    private static let peerShutWrite = Int16(0x2000)

    // MARK: - PollParticipant (the loop's thread)

    func prepare(_ turn: inout PollLoop.Turn) {
        state.withLock { s in
            s.polled.removeAll(keepingCapacity: true)
            for socket in s.sockets {
                let fd = socket.descriptor
                guard fd >= 0 else { continue }
                s.polled.append(socket)
                let ended = s.inputEnded.contains(ObjectIdentifier(socket))
                turn.watch(fd, events: ended ? 0 : Int16(POLLIN) | Self.peerShutWrite)
            }
        }
    }

    func handle(_ ready: UnsafeBufferPointer<pollfd>, nowMs: Int64) {
        var hungUp: [NotifySocket] = []
        var readable: [NotifySocket] = []
        let (onHangUp, onPacket) = state.withLock { s -> (HangUp?, Packet?) in
            for (i, p) in ready.enumerated() where p.revents != 0 && i < s.polled.count {
                let socket = s.polled[i]
                // Removed (and maybe closed, its number reused) while the poll ran: not ours any more.
                guard s.sockets.contains(where: { $0 === socket }) else { continue }
                if p.revents & Int16(POLLIN) != 0 { readable.append(socket) }
                if p.revents & Int16(POLLHUP | POLLERR | POLLNVAL) != 0 {
                    s.sockets.removeAll { $0 === socket }
                    s.inputEnded.remove(ObjectIdentifier(socket))
                    hungUp.append(socket)
                } else if p.revents & Self.peerShutWrite != 0 {
                    s.inputEnded.insert(ObjectIdentifier(socket))
                }
            }
            return (s.onHangUp, s.onPacket)
        }
        if !readable.isEmpty { drain(readable, onPacket) }
        for socket in hungUp { onHangUp?(socket) }
    }

    func detached() {
        state.withLock { s in
            s.sockets.removeAll()
            s.polled.removeAll()
            s.inputEnded.removeAll()
        }
    }

    /// Reads what the clients wrote (at most a few packets per socket and turn).
    private func drain(_ sockets: [NotifySocket], _ onPacket: Packet?) {
        var buffer = [UInt8](repeating: 0, count: 512)
        for socket in sockets {
            for _ in 0..<16 {
                let n = buffer.withUnsafeMutableBytes { socket.receivePacket(into: $0) }
                guard n > 0 else { break }
                onPacket?(socket, Array(buffer[..<n]))
            }
        }
    }
}
