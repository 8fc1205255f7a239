import BridgeBase
import CMosquitto

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The session on its ``PollLoop``: what it polls, how it reads and writes the broker socket, and
/// how a turn's packets are written together. libmosquitto's own `mosquitto_loop` is never called:
/// it `select`s on an internal socketpair besides the socket.
extension MosquittoSession: PollParticipant {
    /// How often `mosquitto_loop_misc` runs while connecting (a stuck TLS write is retried by it;
    /// libmosquitto counts whole seconds).
    static let miscIntervalMs: Int64 = 1000

    /// How often it runs once connected: a quarter of the keep-alive. Its only work then is the
    /// keep-alive (a PINGREQ when nothing went out for `keepalive`, closing a connection whose
    /// PINGRESP did not come), so a PINGREQ goes out at most 1.25 × keepalive after the last
    /// packet, well within the broker's 1.5 ×; and a quiet bridge is not woken every second
    /// (each wake-up of an idle process costs about 100 µs of CPU on a small machine).
    var connectedMiscIntervalMs: Int64 { max(Self.miscIntervalMs, Int64(keepAliveSeconds) * 250) }
    /// At most this many `mosquitto_loop_read` calls per readable socket and turn (each reads one
    /// packet when nothing is in flight).
    static let maxReadsPerTurn = 16

    func prepare(_ turn: inout PollLoop.Turn) {
        if !state.threadNamed && ownsLoop {
            state.threadNamed = true
            _ = cmosquitto_set_thread_name("mqtt")
        }
        if state.phase == .stopped { return }
        let now = PollLoop.nowMs()
        if commands.hasPending { runCommands() }
        if state.phase == .idle { beginAttempt(first: true, nowMs: now) }
        if state.stop != nil { advanceStop(nowMs: now) }
        // Publishes made after this session's turnEnded (another participant's, a loop job).
        flush()

        switch state.phase {
        case .waiting(let until):
            turn.wake(atMs: until)
        case .connecting(let established):
            let socket = mosquitto_socket(handle)
            guard socket >= 0 else { break }
            var events = Int16(POLLIN)
            if !established {
                events |= Int16(POLLOUT)  // the TCP connect completes
            } else if !usesTLS && mosquitto_want_write(handle) {
                events |= Int16(POLLOUT)  // CONNECT
            }
            // During a TLS handshake libmosquitto's want_write stays set from the first
            // SSL_ERROR_WANT_WRITE until the first SSL_write (2.0.11; upstream fixed its own loop
            // in 2.0.16, #2794 "high CPU use on slow TLS connect"): polling for it would spin. The handshake moves on reads; a stuck
            // write is retried by the once-a-second misc tick.
            turn.watch(socket, events: events)
            turn.wake(atMs: state.nextMiscMs)
        case .connected:
            let socket = mosquitto_socket(handle)
            guard socket >= 0 else { break }
            var events = Int16(POLLIN)
            if mosquitto_want_write(handle) { events |= Int16(POLLOUT) }
            turn.watch(socket, events: events)
            turn.wake(atMs: state.liveness.map { min(state.nextMiscMs, $0.nextWakeMs) } ?? state.nextMiscMs)
        case .idle, .stopped:
            break
        }
        switch state.stop {
        case .draining(let deadline), .closing(let deadline):
            turn.wake(atMs: deadline)
        case nil:
            break
        }
    }

    func handle(_ ready: UnsafeBufferPointer<pollfd>, nowMs: Int64) {
        guard state.phase != .stopped else { return }
        if let entry = ready.first, entry.revents != 0, entry.fd == mosquitto_socket(handle) {
            serviceSocket(Int32(entry.revents))
        }
        if state.hasConnection && nowMs >= state.nextMiscMs {
            state.nextMiscMs = nowMs + (state.phase == .connected ? connectedMiscIntervalMs : Self.miscIntervalMs)
            var rc = Mosquitto.success
            if usesTLS, case .connecting = state.phase {
                rc = driveHandshake()
            }
            if rc == Mosquitto.success && mosquitto_socket(handle) >= 0 {
                rc = mosquitto_loop_misc(handle)  // PINGREQ, or closes a dead connection
            }
            checkConnection(rc: rc)
            checkAttemptTimeout(nowMs: nowMs)
        }
        checkLiveness(nowMs: nowMs)
        if case .waiting(let until) = state.phase, nowMs >= until {
            beginAttempt(first: false, nowMs: nowMs)
        }
        if state.stop != nil { advanceStop(nowMs: nowMs) }
    }

    /// Writes what this turn queued (publishes from the loop thread, handed-over commands,
    /// acknowledgements, PINGREQ) together.
    func turnEnded() {
        guard state.phase != .stopped else { return }
        if commands.hasPending { runCommands() }
        if state.stop != nil { advanceStop(nowMs: PollLoop.nowMs()) }
        flush()
    }

    /// Removed from the loop, by ``finishOnLoop()`` or because the loop stopped under us.
    func detached() {
        if state.phase != .stopped {
            // The loop stopped without a stop request: close without waiting.
            if mosquitto_socket(handle) >= 0 {
                _ = mosquitto_disconnect(handle)
                _ = mosquitto_loop_write(handle, 1)
                closeSocket()
            }
            state.phase = .stopped
            state.stop = nil
        }
        connected.store(false, ordering: .releasing)
        exited.store(true, ordering: .releasing)
        exitWaiters.resumeAll()
        connectedWaiters.resumeAll()
        if ownsLoop { loop.stop() }
    }

    // MARK: - Socket

    /// Reads and writes as `revents` says.
    func serviceSocket(_ revents: Int32) {
        if case .connecting(established: false) = state.phase, revents & (POLLOUT | POLLIN) != 0 {
            state.phase = .connecting(established: true)
        }
        if usesTLS, case .connecting = state.phase {
            // The handshake moves in mosquitto_loop_read (net__socket_connect_tls), whatever
            // the socket is ready for; loop_write does nothing until it completes, then sends CONNECT.
            // net__socket_connect_tls reports a failed TCP connect (SSL_ERROR_SYSCALL) as "try
            // again" and keeps the socket: read the error before SSL_connect consumes it, and give
            // up on the socket (the next attempt closes it).
            if revents & POLLERR != 0, let error = socketError() {
                connectionFailed(reason: error)
                return
            }
            let rc = driveHandshake()
            if rc == Mosquitto.success, revents & (POLLERR | POLLHUP) != 0, mosquitto_socket(handle) >= 0 {
                connectionFailed(reason: "connection closed during the TLS handshake")
                return
            }
            checkConnection(rc: rc)
            return
        }
        var rc = Mosquitto.success
        if revents & (POLLIN | POLLERR | POLLHUP | POLLNVAL) != 0 {
            rc = readPackets()
        }
        if rc == Mosquitto.success && revents & POLLOUT != 0 && mosquitto_socket(handle) >= 0 {
            state.writeBlocked = false
            rc = write()
        }
        checkConnection(rc: rc)
    }

    /// One TLS handshake step, then CONNECT once it is complete (or the packets after CONNACK).
    func driveHandshake() -> Int32 {
        errno = 0
        var rc = mosquitto_loop_read(handle, 1)
        if rc == Mosquitto.success && mosquitto_socket(handle) >= 0 && mosquitto_want_write(handle) {
            rc = mosquitto_loop_write(handle, 1)
        }
        return rc
    }

    /// Reads packets until the socket has no more (or ``maxReadsPerTurn``).
    func readPackets() -> Int32 {
        var rc = Mosquitto.success
        for _ in 0..<Self.maxReadsPerTurn {
            errno = 0
            rc = mosquitto_loop_read(handle, 1)
            if rc != Mosquitto.success || errno == EAGAIN || errno == EWOULDBLOCK || mosquitto_socket(handle) < 0 {
                break
            }
        }
        return rc
    }

    /// Writes queued packets (`packet__write` writes every queued packet, one `write` each, until
    /// the socket buffer is full).
    func write() -> Int32 {
        errno = 0
        let rc = mosquitto_loop_write(handle, 1)
        if rc == Mosquitto.success && mosquitto_socket(handle) >= 0 && mosquitto_want_write(handle) {
            state.writeBlocked = true  // POLLOUT resumes
        }
        return rc
    }

    /// Writes what is queued, when connected. With more than one packet of ours, the socket is
    /// corked meanwhile: libmosquitto writes each packet separately, the kernel then sends them as
    /// full segments instead of one segment per packet (TCP_NODELAY).
    func flush() {
        defer { state.queuedSinceFlush = 0 }
        guard state.phase == .connected, !state.writeBlocked else { return }
        let socket = mosquitto_socket(handle)
        guard socket >= 0, mosquitto_want_write(handle) else { return }
        let cork = state.queuedSinceFlush > 1
        if cork { setCork(socket, true) }
        let rc = write()
        // DISCONNECT closes the socket once written; the descriptor could already be another's.
        if cork && mosquitto_socket(handle) == socket { setCork(socket, false) }
        checkConnection(rc: rc)
    }

    private func setCork(_ socket: Int32, _ on: Bool) {
        var value: Int32 = on ? 1 : 0
        _ = setsockopt(socket, Int32(IPPROTO_TCP), TCP_CORK, &value, socklen_t(MemoryLayout<Int32>.size))
    }

    /// Closes the socket through libmosquitto (there is no call for it): after `shutdown`, a read
    /// sees the end of the stream and `mosquitto__loop_rc_handle` closes it and calls
    /// `on_disconnect`.
    func closeSocket() {
        let socket = mosquitto_socket(handle)
        guard socket >= 0 else { return }
        _ = shutdown(socket, Int32(SHUT_RDWR))
        for _ in 0..<4 where mosquitto_socket(handle) >= 0 {
            _ = mosquitto_loop_read(handle, 1)
        }
    }

    /// The pending error of the socket (`SO_ERROR`), as text.
    func socketError() -> String? {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        let socket = mosquitto_socket(handle)
        guard socket >= 0, getsockopt(socket, SOL_SOCKET, SO_ERROR, &error, &length) == 0, error != 0 else {
            return nil
        }
        return strerror(error).map { String(cString: $0) } ?? "errno \(error)"
    }

    /// The test hook's TCP reset: the loop then sees the end of the stream.
    func dropConnectionOnLoop() {
        let socket = mosquitto_socket(handle)
        if socket >= 0 {
            _ = shutdown(socket, Int32(SHUT_RDWR))
        }
    }
}

extension MosquittoSession {
    /// Whether libmosquitto holds packets it has not written (tests; loop thread only).
    var hasUnsentPackets: Bool {
        mosquitto_socket(handle) >= 0 && mosquitto_want_write(handle)
    }

    /// The broker socket, or -1 (tests; loop thread only).
    var socketDescriptor: Int32 { mosquitto_socket(handle) }
}
