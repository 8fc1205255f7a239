/// What a session set up on the current connection (or readiness): which characteristic objects it mapped, which
/// notify, the poll timers. Nothing of it outlives the link: a loss of the link (or of readiness) starts it over.
package struct LinkSetup<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Characteristic object paths mapped on this connection (mapped or skipped by the configuration).
    package var mappedPaths: Set<String> = []
    /// Characteristic object paths that notify.
    package var notifying: [String] = []
    /// Notifying through an `AcquireNotify` socket (a subset of ``notifying``), by path.
    package var acquired: [String: MappedCharacteristic] = [:]
    /// Sockets that hung up while the link stayed: subscribed again at ``resubscribeAt`` if it still is.
    package var resubscribe: [MappedCharacteristic] = []
    package var resubscribeAt: Instant?
    /// The next `poll` read of each characteristic with a `poll` interval, by path.
    package var pollDue: [String: Instant] = [:]

    /// Nothing set up yet.
    package init() {}
}

extension GattQueue {
    /// The link (or readiness) went away: the setup of that connection is void, and so are queued poll reads;
    /// commands wait for the next connection (or their deadline).
    package mutating func linkLost() {
        setup = Setup()
        work.removeAll { if case .read = $0 { return true } else { return false } }
    }
}
