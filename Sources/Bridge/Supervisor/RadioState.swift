import BridgeCore

/// One adapter in use (SPEC §10: a bridge may use several): its power and its scan, as the
/// ``SupervisorCore`` keeps them.
struct RadioState: Sendable, Equatable {
    /// Present and powered: sessions may be placed on it and its scan may run.
    var ready = false
    /// A `Powered = true` call of ours is under way.
    var poweringOn = false
    /// Powered off while in use when another adapter was up: its devices moved to the others, and the bridge
    /// leaves it off (someone turned it off) until it is powered again. With one adapter the bridge powers it
    /// on again, as it always did.
    var leftOff = false
    /// Its scan.
    var discovery = DiscoveryState()
}
