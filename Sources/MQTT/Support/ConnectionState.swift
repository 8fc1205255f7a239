import BridgeBase

/// What a ``MosquittoSession``'s connection is doing. Only the poll loop's thread reads or
/// writes it.
struct ConnectionState {
    /// Where the connection stands.
    enum Phase: Equatable {
        /// Started, no attempt made yet.
        case idle
        /// A socket exists, CONNACK has not come: TCP connect, then (with TLS) the handshake, then
        /// CONNECT. `established`: the socket was seen writable (the TCP connect completed).
        case connecting(established: Bool)
        /// The broker accepted the connection.
        case connected
        /// No socket; the next attempt is due at this monotonic millisecond.
        case waiting(untilMs: Int64)
        /// Stopped: the session is detached, or about to be.
        case stopped
    }

    /// A requested stop in progress.
    enum Stop: Equatable {
        /// Waiting until QoS 1/2 publishes are acknowledged (or the deadline).
        case draining(deadlineMs: Int64)
        /// DISCONNECT queued; waiting until it is written and the socket closed (or the deadline).
        case closing(deadlineMs: Int64)
    }

    var phase = Phase.idle
    var stop: Stop?
    var backoff: Backoff
    /// Why the current attempt failed (set by callbacks before the socket closes).
    var attemptReason: String?
    /// The last OpenSSL error libmosquitto logged during this attempt (its own error code says only
    /// "A TLS error occurred.").
    var lastTLSError: String?
    /// The current attempt reached CONNACK success.
    var attemptConnected = false
    /// When the current attempt began (monotonic milliseconds): one that has no CONNACK after
    /// ``MosquittoSession/connectTimeoutMs`` is given up and made again.
    var attemptStartedMs: Int64 = 0
    /// When `mosquitto_loop_misc` (keep-alive) is due next.
    var nextMiscMs: Int64 = 0
    /// Whether the broker still answers the probes (connected, with a probe topic only).
    var liveness: BrokerLiveness?
    /// Why the session itself ended the connection (no answer to the probes), for the loss's log line.
    var cutOffReason: String?
    /// The next attempt must start afresh (`mosquitto_connect_async`): the handle was reinitialised.
    var handleReset = false
    /// Packets queued by us since the last flush (more than one: the flush corks the socket).
    var queuedSinceFlush = 0
    /// The last write stopped on a full socket buffer: wait for POLLOUT instead of flushing.
    var writeBlocked = false
    /// Filters re-sent after every connection.
    var subscriptions: [(filter: String, qos: Int32)] = []
    /// The buffer commands are swapped into (kept to avoid allocating).
    var spareCommands: [SessionCommand] = []
    /// The loop thread was named (own loop only).
    var threadNamed = false

    init(backoff: Backoff) {
        self.backoff = backoff
        spareCommands.reserveCapacity(64)
    }

    /// Whether a socket-bearing phase (connecting or connected).
    var hasConnection: Bool {
        switch phase {
        case .connecting, .connected: return true
        case .idle, .waiting, .stopped: return false
        }
    }
}
