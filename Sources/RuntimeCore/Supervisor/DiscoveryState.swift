import BridgeCore

/// The scan's state.
package struct DiscoveryState<Instant: InstantProtocol>: Sendable, Equatable where Instant.Duration == Duration {
    /// The adapter is up and the scan may run.
    package var wanted = false
    /// A `StartDiscovery` of ours is under way.
    package var starting = false
    /// A scan of ours is running.
    package var ours = false
    package var retryAt: Instant?
    package var watchdogAt: Instant?
    package var lastAdvertisement: Instant?
    /// Passive scanning through an advertisement monitor.
    package var monitor = MonitorState.off
    /// Stored peripherals whose first `Connect` (or `ConnectDevice`) has not returned yet: the
    /// scan waits for them (SPEC §5, connect before scanning), at most until ``heldUntil``.
    package var heldFor: Set<String> = []
    package var heldUntil: Instant?
    /// How long stored peripherals get before the scan starts anyway.
    package static var storedHeadStart: Duration { .seconds(2) }

    /// The advertisement monitor (passive scanning, `AdvertisementMonitorManager1`).
    package enum MonitorState: Sendable, Equatable {
        /// Not offered (BlueZ without `--experimental`), not needed, or not tried yet.
        case off
        /// `RegisterMonitor` is in flight.
        case registering
        /// Advertisements of decodable sensors arrive without a scan.
        case active
        /// `RegisterMonitor` failed: active scanning, as without it.
        case failed
    }
}
