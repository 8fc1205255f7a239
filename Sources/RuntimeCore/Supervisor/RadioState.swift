import BridgeCore

/// One adapter in use (SPEC §10: a bridge may use several): its power and its scan, as the
/// ``SupervisorCore`` keeps them.
package struct RadioState<Instant: InstantProtocol>: Sendable, Equatable where Instant.Duration == Duration {
    /// Present and powered: sessions may be placed on it and its scan may run.
    package var ready = false
    /// A `Powered = true` call of ours is under way.
    package var poweringOn = false
    /// Powered off while in use when another adapter was up: its devices moved to the others, and the bridge
    /// leaves it off (someone turned it off) until it is powered again. With one adapter the bridge powers it
    /// on again, as it always did.
    package var leftOff = false
    /// Its scan.
    package var discovery = DiscoveryState<Instant>()
}
