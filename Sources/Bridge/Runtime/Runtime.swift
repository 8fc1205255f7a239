import BlueZ
import BridgeCore
import RuntimeCore
import Logging
import MQTT

/// The bridge's runtime wired together over its two seams (``BluetoothCentral``,
/// ``MessageBroker``) and a clock: the supervisor, command intake and the value router. The
/// service runs it over BlueZ and libmosquitto; tests run it over in-memory fakes.
struct Runtime: Sendable {
    let context: RuntimeContext
    let supervisorMailbox: Mailbox<SupervisorInput>
    let intake: CommandIntake

    init(
        config: BridgeConfig, central: any BluetoothCentral, broker: any MessageBroker, clock: any BridgeClock,
        logger: Logger, timing: SessionTiming = SessionTiming(),
        families: [any AdvertisementFamily.Type] = AdvertisementDecoder.families
    ) {
        let topics = TopicMapper(config: config)
        let mailbox = Mailbox<SupervisorInput>()
        let registry = DeviceRegistry()
        let responder = CommandResponder(broker: broker, logger: logger)
        let values = ValueRouter(mqtt: broker, clock: clock, keepsLast: config.homeAssistant.discovery, logger: logger)
        let roles = topics.cluster.map { ClusterRoles(bridgeID: $0.bridgeID) }
        var forward: (@Sendable (String, BluetoothAddress, String, Int) -> Void)?
        if config.cluster.enabled {
            forward = { name, address, path, rssi in mailbox.send(.trackerHeard(name, address: address, path: path, rssi: rssi)) }
        }
        let presence = config.trackers.isEmpty ? nil : PresenceRouter(
            config: config, broker: broker, topics: topics, clock: clock, logger: logger,
            wake: { mailbox.send(.presence) }, forward: forward)
        context = RuntimeContext(
            config: config, topics: topics, central: central, broker: broker, router: values,
            advertisements: AdvertisementRouter(values: values, clock: clock, logger: logger, families: families),
            registry: registry, slots: SlotPool(capacity: config.bluetooth.maxConnections), clock: clock,
            logger: logger, supervisor: mailbox, responder: responder, timing: timing, clusterRoles: roles,
            presence: presence)
        supervisorMailbox = mailbox
        var intake = CommandIntake(
            topics: topics, registry: registry, responder: responder, supervisor: mailbox, clock: clock,
            timeout: config.commands.timeout, allow: config.commands,
            homeAssistantStatus: config.homeAssistant.discovery ? HomeAssistantDiscovery.statusTopic(topics) : nil)
        if let clusterTopics = topics.cluster, let roles { intake.cluster = (clusterTopics, roles) }
        self.intake = intake
    }

    /// Runs the supervisor (and its sessions) until ``stop()``.
    func run() async {
        let supervisor = Supervisor(context: context, mailbox: supervisorMailbox)
        await supervisor.run()
    }

    /// Asks for a clean, bounded shutdown.
    func stop() {
        supervisorMailbox.send(.stop)
    }
}
