/// A point on the bridge's monotonic clock: the time since the clock's origin.
///
/// The runtime measures every timer and deadline in these, so that tests can drive it with a
/// fake clock (``BridgeClock``) and the pure state machines of BridgeCore take them as their
/// `Instant`.
public struct BridgeInstant: InstantProtocol, Sendable, CustomStringConvertible {
    /// Time since the clock's origin.
    public var offset: Duration

    /// Creates an instant at `offset` after the origin.
    public init(offset: Duration) { self.offset = offset }

    public func advanced(by duration: Duration) -> BridgeInstant { BridgeInstant(offset: offset + duration) }
    public func duration(to other: BridgeInstant) -> Duration { other.offset - offset }
    public static func < (lhs: BridgeInstant, rhs: BridgeInstant) -> Bool { lhs.offset < rhs.offset }

    /// Seconds since the origin, with milliseconds (`12.345s`).
    public var description: String {
        let ms = offset.components.seconds * 1000 + offset.components.attoseconds / 1_000_000_000_000_000
        return "\(ms / 1000).\(String(ms % 1000 + 1000).dropFirst())s"
    }
}

/// The clock the runtime waits on: real time in the bridge, a fake in tests.
public protocol BridgeClock: Sendable {
    /// Now.
    var now: BridgeInstant { get }
    /// Suspends until `deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: BridgeInstant) async throws
}

extension BridgeClock {
    /// The time left until `deadline` (zero when it passed).
    public func remaining(until deadline: BridgeInstant) -> Duration {
        max(.zero, now.duration(to: deadline))
    }
}

/// Real monotonic time (`ContinuousClock`).
public struct LiveClock: BridgeClock {
    private let origin: ContinuousClock.Instant

    /// A clock whose origin is now.
    public init() { origin = ContinuousClock.now }

    public var now: BridgeInstant { BridgeInstant(offset: origin.duration(to: ContinuousClock.now)) }

    public func sleep(until deadline: BridgeInstant) async throws {
        try await ContinuousClock().sleep(until: origin.advanced(by: deadline.offset), tolerance: .milliseconds(1))
    }
}
