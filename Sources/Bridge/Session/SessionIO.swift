import BlueZ
import BridgeCore

/// The seams a session's executor acts on: BlueZ calls, publishing, routes, slots, the clock
/// it waits on, the supervisor's inbox and the command responder.
struct SessionIO: Sendable {
    var central: any BluetoothCentral
    var broker: any MessageBroker
    var router: ValueRouter
    var slots: SlotPool
    var clock: any BridgeClock
    var supervisor: Mailbox<SupervisorInput>
    var responder: CommandResponder
    /// Where a session records its device's pairing retry schedule.
    var pairingHolds: PairingHolds
}

/// Waits of a session that are not in the configuration.
struct SessionTiming: Sendable {
    /// How long no GATT object may have appeared before a device's objects count as complete
    /// (BlueZ 5.66 exports them one `InterfacesAdded` at a time, before or after `ServicesResolved`).
    var gattQuietPeriod: Duration = .milliseconds(250)
    /// How long after `ServicesResolved` to wait for services that `UUIDs` names but that have no
    /// object yet, before going on without them.
    var missingServicesGrace: Duration = .seconds(3)
    /// Failed connection attempts after which a poll cycle counts as failed (SPEC §6).
    var pollCycleAttempts = 3
    /// `Device1.Connect` timeout.
    var connectTimeout: Duration = .seconds(30)
}

/// A device a session is created for.
struct SessionDevice: Sendable {
    var path: String
    var address: BluetoothAddress
    var addressType: String
    var segment: String
    var config: BridgeConfig.Device?
    /// Characteristic UUIDs whose reads need pairing (from the state file): never read.
    var unreadable: Set<String>
    /// Connect at once (a stored peripheral).
    var connectNow: Bool
    /// Jitter seed of the backoff.
    var seed: UInt64
    /// The connection policy: the `devices` entry's, `advertisement` for an advertiser that
    /// `bluetooth.advertisements: decodable` picked up, else `always`.
    var policy: ConnectionPolicy
    /// When the device may pair again after a failed pairing of an earlier session (SPEC §11).
    var pairingRetry = PairingRetry<BridgeInstant>()
}
