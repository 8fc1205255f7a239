#if canImport(Glibc)
import Glibc
#endif

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

/// The runtime's one source of time: the monotonic clock it measures and waits on, and the wall
/// clock it stamps payloads with (SPEC §10's `since` and `t`); real time in the bridge, a fake in
/// tests. No other part of the runtime reads a clock (`RuntimeIdleInvariantTests`).
public protocol BridgeClock: Sendable {
    /// Now, on the monotonic clock.
    var now: BridgeInstant { get }
    /// Now on the wall clock: whole seconds since 1970-01-01 UTC.
    var unixTime: Int64 { get }
    /// Suspends until `deadline`; throws `CancellationError` when the task is cancelled.
    func sleep(until deadline: BridgeInstant) async throws
}

extension BridgeClock {
    /// The time left until `deadline` (zero when it passed).
    public func remaining(until deadline: BridgeInstant) -> Duration {
        max(.zero, now.duration(to: deadline))
    }
}

/// Real time: monotonic (`ContinuousClock`) and wall (`time(2)`).
public struct LiveClock: BridgeClock {
    private let origin: ContinuousClock.Instant

    /// A clock whose origin is now.
    public init() { origin = ContinuousClock.now }

    public var now: BridgeInstant { BridgeInstant(offset: origin.duration(to: ContinuousClock.now)) }

    public var unixTime: Int64 { Int64(time(nil)) }

    public func sleep(until deadline: BridgeInstant) async throws {
        try await ContinuousClock().sleep(until: origin.advanced(by: deadline.offset), tolerance: .milliseconds(1))
    }
}
