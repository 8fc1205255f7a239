/// Where a `connection: poll` device is in its cycle (SPEC §6). Owned by the device's
/// ``SessionCore``: nothing else changes it.
package struct PollCycle<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The part of the cycle the device is in.
    package enum Phase: Sendable, Equatable {
        /// Between cycles (commands may still connect it on demand).
        case waiting
        /// Connecting and reading; failed attempts before it started: `failuresAtStart`.
        case running(startedAt: Instant, failuresAtStart: Int)
        /// Staying connected for notifications until then.
        case listening(until: Instant)
    }

    package var phase: Phase = .waiting
    /// When the next cycle starts.
    package var nextAt: Instant?

    package var isRunning: Bool {
        if case .running = phase { return true }
        return false
    }

    package func nextDeadline(isPoll: Bool) -> Instant? {
        guard isPoll else { return nil }
        switch phase {
        case .waiting: return nextAt
        case .running: return nextAt
        // Only the end of listening: the next cycle's start cannot be acted on before it (``SessionCore/advanceCycle()``
        // looks at nothing else while listening), and once passed, the minimum of the two hid the end (the core drops
        // deadlines that had passed when its timers last ran): a cycle slower than `poll_interval - listen` listened on
        // until some other deadline.
        case .listening(let until): return until
        }
    }
}
