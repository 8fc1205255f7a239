import BridgeCore

/// The scan's state.
struct DiscoveryState: Sendable, Equatable {
    /// The adapter is up and the scan may run.
    var wanted = false
    /// A `StartDiscovery` of ours is under way.
    var starting = false
    /// A scan of ours is running.
    var ours = false
    var retryAt: BridgeInstant?
    var watchdogAt: BridgeInstant?
    var lastAdvertisement = BridgeInstant(offset: .zero)
    /// Passive scanning through an advertisement monitor.
    var monitor = MonitorState.off
    /// Stored peripherals whose first `Connect` (or `ConnectDevice`) has not returned yet: the
    /// scan waits for them (SPEC §5, connect before scanning), at most until ``heldUntil``.
    var heldFor: Set<String> = []
    var heldUntil: BridgeInstant?
    /// How long stored peripherals get before the scan starts anyway.
    static let storedHeadStart: Duration = .seconds(2)

    /// The advertisement monitor (passive scanning, `AdvertisementMonitorManager1`).
    enum MonitorState: Sendable, Equatable {
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
