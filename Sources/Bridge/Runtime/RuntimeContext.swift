import BlueZ
import BridgeCore
import RuntimeCore
import Logging
import MQTT

/// The runtime's context: what ``Runtime`` wires together for the supervisor (configuration, the
/// BlueZ and MQTT seams, the value router, the registry, the connection slots, the clock and the
/// supervisor's inbox).
///
/// Only the ``Supervisor`` keeps it (it uses nearly every field: it wires the sessions, answers
/// health with the router's and the slots' figures, writes the registry). A session is given
/// what it needs: the pure configuration of its ``SessionCore`` (``SessionCore/Configuration``)
/// and the seams its executor acts on (``SessionIO``); an ``AdvertisementSession`` the seams,
/// the topics and a logger. No session writes the registry (the supervisor records their reports).
struct RuntimeContext: Sendable {
    var config: BridgeConfig
    var topics: TopicMapper
    var central: any BluetoothCentral
    var broker: any MessageBroker
    var router: ValueRouter
    /// Advertisements of advertisement devices (SPEC §7).
    var advertisements: AdvertisementRouter
    var registry: DeviceRegistry
    var slots: SlotPool
    var clock: any BridgeClock
    var logger: Logger
    var supervisor: Mailbox<SupervisorInput>
    var responder: CommandResponder
    /// Timing of the connection state machines (shortened in tests).
    var timing: SessionTiming = SessionTiming()
    /// With `cluster.enabled`: who handles each device's commands (written by the supervisor, read by intake).
    var clusterRoles: ClusterRoles? = nil
    /// The trackers' presence (SPEC §12); nil without trackers.
    var presence: PresenceRouter? = nil
    /// The devices whose pairing failed, and when they may pair again (SPEC §11).
    var pairingHolds = PairingHolds()
}

extension RuntimeContext {
    /// The seams a session's executor acts on.
    var io: SessionIO {
        SessionIO(
            central: central, broker: broker, router: router, slots: slots, clock: clock, supervisor: supervisor,
            responder: responder, pairingHolds: pairingHolds)
    }
}
