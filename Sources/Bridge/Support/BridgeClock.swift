import BridgeBase

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
