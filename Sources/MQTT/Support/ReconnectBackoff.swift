/// Exponential backoff between reconnection attempts: the first delay is `initial`, each
/// following one doubles, capped at `maximum`. Pure state, driven by the network thread.
struct ReconnectBackoff: Sendable {
    /// The first delay (at least 1 ms).
    let initial: Duration
    /// The largest delay (at least `initial`).
    let maximum: Duration
    /// The delay ``next()`` returns next.
    private(set) var current: Duration

    init(initial: Duration, maximum: Duration) {
        let first = max(initial, .milliseconds(1))
        self.initial = first
        self.maximum = max(maximum, first)
        self.current = first
    }

    /// The delay to wait before the next attempt; doubles the following one.
    mutating func next() -> Duration {
        let delay = current
        current = current > maximum / 2 ? maximum : current * 2
        return delay
    }

    /// Starts over from `initial` (after a successful connection).
    mutating func reset() {
        current = initial
    }
}

extension Duration {
    /// The duration in whole milliseconds, rounded up, clamped to `Int32` (for `poll`).
    var pollMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        if seconds >= Int64(Int32.max / 1000) { return Int32.max }
        if seconds < 0 { return 0 }
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(millis)
    }
}
