/// A point on the bridge's monotonic clock: the time since the clock's origin.
///
/// The runtime measures every timer and deadline in these, so that tests can drive it with a
/// fake clock (``BridgeClock``) and the pure state machines of BridgeCore and RuntimeCore take them as their
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
