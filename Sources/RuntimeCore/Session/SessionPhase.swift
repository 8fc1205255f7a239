/// Where a ``SessionCore`` is, each case with the data that belongs to it.
///
/// The device's ``DeviceConnectionStateMachine`` says how far the connection went (connecting, resolving,
/// subscribing, ready, backing off); the phase holds what the session keeps for it. What outlives a link stays in
/// the core: the queued commands (``GattQueue``), the call in flight (its completion comes back whatever happened
/// to the link, tagged with its connection attempt), the mapping (a `/set` payload is checked against it between
/// connections), the GATT objects' times (``GattObjectsWait``), the pairing memory of the session
/// (``SessionCore/PairingState``), availability and the poll cycle.
///
/// Setting up, pairing and serving are not cases of their own: a `Pair` may run in the middle of a setup, a setup
/// runs again while ready (characteristics that appeared, a poll cycle's reads), and readiness is the machine's. The
/// link says which: ``SessionLink/Setup/running``, ``SessionLink/pairing``.
package enum SessionPhase<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// No link (not connected yet, or the link went): commands wait for the next link or their deadline.
    case waiting
    /// Connected (the machine's `isConnected`): this link's setup, subscriptions, poll timers and pairing. A loss of
    /// readiness with the connection kept starts a new link.
    case linked(SessionLink<Instant>)
    /// Stopped, or its device object removed: every input is ignored, and nothing is queued.
    case ended

    /// The current link (nil while waiting or ended).
    package var link: SessionLink<Instant>? {
        if case .linked(let link) = self { return link }
        return nil
    }

    /// The session ended.
    package var isEnded: Bool {
        if case .ended = self { return true }
        return false
    }
}
