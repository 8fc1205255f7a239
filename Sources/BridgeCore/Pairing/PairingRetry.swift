/// When a device whose pairing failed may be paired again (SPEC §11): a lock or a keypad may lock itself after a few
/// wrong codes, so a failed pairing is not retried on the next connection but after a delay that grows, 30 s
/// doubling to 10 min, and starts over after a successful pairing, a `bridge/request/reconnect` of the device, or a
/// new configuration (a restart of the bridge: nothing of it is stored).
///
/// A pure value with no clock: the instants are handed in. No jitter, so that the log can say when the next attempt
/// is and a test can check the spacing.
public struct PairingRetry<Instant: InstantProtocol>: Sendable, Hashable where Instant.Duration == Duration {
    /// The first delay after a failed pairing.
    public static var firstDelay: Duration { .seconds(30) }
    /// The longest delay.
    public static var longestDelay: Duration { .seconds(600) }

    /// The delays, 30 s doubling to 10 min.
    public private(set) var backoff = Backoff(initial: firstDelay, maximum: longestDelay, multiplier: 2, jitter: 0, seed: 0)
    /// No connection (and so no pairing) before this instant; nil: no failed pairing since the last reset.
    public private(set) var notBefore: Instant?
    /// Failed pairings since the last reset.
    public private(set) var failures = 0

    /// No failed pairing.
    public init() {}

    /// A pairing failed at `now`: the next attempt is no sooner than the instant returned.
    @discardableResult
    public mutating func failed(at now: Instant) -> Instant {
        failures += 1
        let at = now.advanced(by: backoff.next())
        notBefore = at
        return at
    }

    /// A success, a reconnect request: the next failure waits the first delay again.
    public mutating func reset() {
        backoff.reset()
        notBefore = nil
        failures = 0
    }

    /// Whether a connection must wait at `now` (a failed pairing's delay has not passed).
    public func holds(at now: Instant) -> Bool {
        guard let notBefore else { return false }
        return now < notBefore
    }
}
