/// Exponential backoff with jitter: `initial × multiplier^attempt`, capped at
/// `maximum`, each delay scaled by a random factor in `1 ± jitter` (and again
/// capped at `maximum`).
public struct Backoff: Sendable, Hashable {
    /// The first delay.
    public var initial: Duration
    /// The largest delay.
    public var maximum: Duration
    /// The growth factor per attempt (≥ 1).
    public var multiplier: Double
    /// The relative jitter, 0 (none) ... 1.
    public var jitter: Double
    /// How many delays have been handed out since the last reset.
    public private(set) var attempt: Int = 0
    var generator: SplitMix64

    /// Creates a backoff; `seed` fixes the jitter sequence. The first delay is at least 1 ms (a
    /// zero delay would make a retry loop spin).
    public init(initial: Duration, maximum: Duration, multiplier: Double = 2, jitter: Double = 0.2, seed: UInt64) {
        let initial = max(initial, .milliseconds(1))
        self.initial = initial
        self.maximum = max(initial, maximum)
        self.multiplier = max(1, multiplier)
        self.jitter = min(1, max(0, jitter))
        self.generator = SplitMix64(seed: seed)
    }

    /// The delay before the next attempt; advances ``attempt``.
    public mutating func next() -> Duration {
        let maximumSeconds = maximum.inSeconds
        var base = initial.inSeconds
        var step = 0
        while step < attempt && base < maximumSeconds {
            base *= multiplier
            step += 1
        }
        base = min(base, maximumSeconds)
        attempt += 1
        let factor = 1 + jitter * (2 * generator.nextUnit() - 1)
        return .seconds(min(maximumSeconds, base * factor))
    }

    /// Starts over at ``initial``.
    public mutating func reset() {
        attempt = 0
    }
}
