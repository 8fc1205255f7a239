import BridgeBase

#if canImport(Glibc)
import Glibc
#endif

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
