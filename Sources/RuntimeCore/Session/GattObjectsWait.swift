/// When a session may map a device's GATT objects: BlueZ exports them one by one around `ServicesResolved`, and a
/// service it lists in `UUIDs` may come late or never (``SessionCore/checkGatt(_:)`` decides with these times).
///
/// Kept beside the session's phase, not in its link: objects may appear before the session sees the link come up
/// (BlueZ's signals and the `Connect` reply come in their own order), and the quiet period counts from them. Only
/// the pending check goes with the connection (``SessionCore`` clears ``checkAt`` when the machine disconnects).
package struct GattObjectsWait<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// When a GATT service or characteristic object last appeared.
    package var lastChangeAt: Instant?
    /// When `ServicesResolved` last became true.
    package var resolvedAt: Instant?
    /// When to check again (the quiet period after the last object, or the grace for missing services).
    package var checkAt: Instant?
    /// The services without objects were logged for this `ServicesResolved` (once each time it becomes true).
    package var reportedMissingServices = false

    /// Nothing seen yet.
    package init() {}

    /// An object appeared at `now`: check once no other one came for `quietPeriod`.
    package mutating func objectAppeared(at now: Instant, quietPeriod: Duration) {
        lastChangeAt = now
        checkAt = now.advanced(by: quietPeriod)
    }

    /// `ServicesResolved` became true at `now`: the grace for missing services starts.
    package mutating func resolved(at now: Instant) {
        resolvedAt = now
        reportedMissingServices = false
    }
}
