import BridgeCore

extension SupervisorCore {
    /// Which advertisement reports the supervisor's loop is handed, besides those of advertisement devices (which
    /// the advertisement router publishes on the I/O thread) and trackers (the presence router's). An RSSI or
    /// advertisement-data report of any other device concerns the supervisor only for the cluster's sightings, the
    /// adapter placement (several adapters) and `advertisements: decodable` (data that may now decode); otherwise it
    /// is only a sign of life of the scan, kept off the loop (with trackers among 200 advertisers that is a task hop
    /// per advertisement saved).
    package struct AdvertisementFilter: Sendable, Equatable {
        /// Every report concerns the supervisor (a cluster member, or several adapters).
        package var everyReport: Bool
        /// Reports whose data changed concern it (`advertisements: decodable`).
        package var changedData: Bool

        /// Whether a report (its data changed or not) goes to the supervisor's loop.
        package func forwards(dataChanged: Bool) -> Bool { everyReport || (changedData && dataChanged) }
    }

    /// The filter for this configuration (``AdvertisementFilter``).
    package var advertisementFilter: AdvertisementFilter {
        AdvertisementFilter(
            everyReport: config.cluster.enabled || severalAdapters,
            changedData: config.bluetooth.advertisements == .decodable)
    }
}
