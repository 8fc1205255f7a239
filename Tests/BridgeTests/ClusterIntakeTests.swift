import BridgeCore
import ConfigLoader
import Logging
import MQTT
import Testing

@testable import Bridge

/// ``CommandIntake`` in a cluster (SPEC §10, rule 1): the owner executes a command, the other bridges ignore it, and
/// for a device nobody owns only the online bridge whose id sorts first answers `not_connected`.
@Suite(.timeLimit(.minutes(1))) struct ClusterIntakeTests {
    let broker = FakeBroker()
    let registry = DeviceRegistry()
    let supervisor = Mailbox<SupervisorInput>()
    let roles = ClusterRoles(bridgeID: "kitchen")
    let intake: CommandIntake

    init() throws {
        let config = try BridgeConfig.parse(
            yaml: "mqtt: { url: \"mqtt://127.0.0.1:1\" }\nbridge: { id: kitchen }\ncluster: { enabled: true }\n",
            fileName: "test.yaml", environment: [:], hostName: "test")
        let topics = TopicMapper(config: config)
        var intake = CommandIntake(
            topics: topics, registry: registry, responder: CommandResponder(broker: broker, logger: Logger(label: "test")),
            supervisor: supervisor, clock: FakeClock(), timeout: .seconds(10), allow: config.commands,
            homeAssistantStatus: nil)
        intake.cluster = (try #require(topics.cluster), roles)
        self.intake = intake
    }

    func set(_ device: String) -> MQTTMessage {
        MQTTMessage(topic: "ble/\(device)/180a/2a29/set", payload: Array("01".utf8), qos: 1, retain: false)
    }

    @Test("the cluster filters are subscribed and their messages go to the supervisor")
    func clusterTopicsToSupervisor() async throws {
        let filters = CommandIntake.filters(topics: intake.topics, homeAssistantDiscovery: false)
        #expect(filters.contains("ble/+/owner") && filters.contains("ble/bridges/+/sightings") && filters.contains("ble/bridges/+/state"))
        intake.handle(MQTTMessage(topic: "ble/polar/owner", payload: Array("x".utf8), qos: 1, retain: true))
        guard case .cluster(.owner(device: "polar"), let payload)? = await supervisor.receive() else {
            Issue.record("the owner claim did not reach the supervisor")
            return
        }
        #expect(payload == Array("x".utf8))
    }

    @Test("owned by another bridge: ignored, nothing answered; owned here: the session gets it")
    func ownerExecutes() async throws {
        roles.update(.init(owners: ["polar": "garage", "thermo": "kitchen"], answersUnowned: true))
        intake.handle(set("polar"))
        #expect(broker.all.isEmpty)
        let mailbox = Mailbox<SessionInput>()
        registry.add(DeviceRegistry.Entry(
            record: DeviceRecord(
                path: "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01", segment: "thermo", address: BluetoothAddress("AA:BB:CC:DD:EE:01")!,
                addressType: "public", policy: .always),
            mailbox: mailbox))
        intake.handle(set("thermo"))
        #expect(mailbox.count == 1)
        #expect(broker.all.isEmpty)
    }

    @Test("owned here but its session not started yet (the claim wait): not_connected")
    func ownedNotYetServed() throws {
        roles.update(.init(owners: ["thermo": "kitchen"], answersUnowned: false))
        intake.handle(set("thermo"))
        #expect(broker.last("ble/thermo/180a/2a29/result")?.contains(#""code":"not_connected""#) == true)
    }

    @Test("nobody owns it: the first online bridge answers not_connected, the others stay silent")
    func unowned() throws {
        roles.update(.init(owners: [:], answersUnowned: false))
        intake.handle(set("ghost"))
        #expect(broker.all.isEmpty)
        roles.update(.init(owners: [:], answersUnowned: true))
        intake.handle(set("ghost"))
        let result = try #require(broker.last("ble/ghost/180a/2a29/result"))
        #expect(result.contains(#""code":"not_connected""#) && result.contains("no bridge of the cluster owns"), "\(result)")
    }
}
