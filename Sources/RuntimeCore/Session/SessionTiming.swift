/// Waits of a session that are not in the configuration.
package struct SessionTiming: Sendable {
    /// How long no GATT object may have appeared before a device's objects count as complete
    /// (BlueZ 5.66 exports them one `InterfacesAdded` at a time, before or after `ServicesResolved`).
    package var gattQuietPeriod: Duration = .milliseconds(250)
    /// How long after `ServicesResolved` to wait for services that `UUIDs` names but that have no
    /// object yet, before going on without them.
    package var missingServicesGrace: Duration = .seconds(3)
    /// Failed connection attempts after which a poll cycle counts as failed (SPEC §6).
    package var pollCycleAttempts = 3
    /// `Device1.Connect` timeout.
    package var connectTimeout: Duration = .seconds(30)

    /// A value with these fields.
    package init(
        gattQuietPeriod: Duration = .milliseconds(250), missingServicesGrace: Duration = .seconds(3), pollCycleAttempts: Int = 3, connectTimeout: Duration = .seconds(30)
    ) {
        self.gattQuietPeriod = gattQuietPeriod
        self.missingServicesGrace = missingServicesGrace
        self.pollCycleAttempts = pollCycleAttempts
        self.connectTimeout = connectTimeout
    }
}
