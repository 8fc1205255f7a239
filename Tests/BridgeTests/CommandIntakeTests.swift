import BridgeBase
import BridgeCore
import ConfigLoader
import Logging
import MQTT
import Testing

@testable import Bridge

/// ``CommandIntake`` over a fake broker and clock: where each message of the subscriptions goes.
@Suite(.timeLimit(.minutes(1))) struct CommandIntakeTests {
    /// An intake with its registry, the supervisor's inbox, and the broker its results go to.
    private struct Fixture {
        let broker = FakeBroker()
        let clock = FakeClock()
        let registry = DeviceRegistry()
        let supervisor = Mailbox<SupervisorInput>()
        let topics: TopicMapper
        let intake: CommandIntake

        init(_ yaml: String = "") throws {
            let config = try BridgeConfig.parse(
                yaml: #"mqtt: { url: "mqtt://127.0.0.1:1" }"# + "\n" + yaml, fileName: "test.yaml", environment: [:],
                hostName: "test")
            topics = TopicMapper(config: config)
            intake = CommandIntake(
                topics: topics, registry: registry,
                responder: CommandResponder(broker: broker, logger: Logger(label: "test")), supervisor: supervisor,
                clock: clock, timeout: config.commands.timeout, allow: config.commands,
                homeAssistantStatus: config.homeAssistant.discovery ? HomeAssistantDiscovery.statusTopic(topics) : nil)
        }

        /// Registers a managed device with segment `segment`; returns its session's inbox.
        func addDevice(_ segment: String, address: String = "AA:BB:CC:DD:EE:01") -> Mailbox<SessionInput> {
            let mailbox = Mailbox<SessionInput>()
            registry.add(DeviceRegistry.Entry(
                record: DeviceRecord(
                    path: BlueZNames.devicePath(adapter: "/org/bluez/hci0", address: address), segment: segment,
                    address: BluetoothAddress(address)!, addressType: "public", policy: .always),
                mailbox: mailbox))
            return mailbox
        }

        func message(_ topic: String, _ text: String, responseTopic: String? = nil, correlation: [UInt8]? = nil)
            -> MQTTMessage
        {
            MQTTMessage(
                topic: topic, payload: Array(text.utf8), qos: 1, retain: false, responseTopic: responseTopic,
                correlationData: correlation)
        }
    }

    /// What is queued in `mailbox`, without waiting.
    private func queued<Input: Sendable>(_ mailbox: Mailbox<Input>) async -> [Input] {
        var out: [Input] = []
        while mailbox.count > 0, let input = await mailbox.receive() { out.append(input) }
        return out
    }

    @Test("a /set for a managed device reaches that device's session, with its result topic and deadline, and nothing is published")
    func setReachesTheSession() async throws {
        let f = try Fixture("commands: { timeout: 7s }")
        let thermostat = f.addDevice("thermostat")
        let other = f.addDevice("other", address: "AA:BB:CC:DD:EE:02")
        f.intake.handle(f.message("ble/thermostat/180a/2a29/set", #"{"hex": "01"}"#))
        let inputs = await queued(thermostat)
        try #require(inputs.count == 1)
        guard case .command(let pending) = inputs[0] else {
            Issue.record("expected a command, got \(inputs[0])")
            return
        }
        #expect(pending.device == "thermostat")
        #expect(pending.service == "180a")
        #expect(pending.characteristic == "2a29")
        #expect(pending.operation == .set)
        #expect(pending.resultTopic == "ble/thermostat/180a/2a29/result")
        #expect(pending.deadline == f.clock.now.advanced(by: .seconds(7)))
        #expect(pending.payload == Array(#"{"hex": "01"}"#.utf8))
        #expect(other.count == 0)
        #expect(f.broker.all.isEmpty)
    }

    @Test("a /get goes to the session as a read")
    func getReachesTheSession() async throws {
        let f = try Fixture()
        let device = f.addDevice("meter")
        f.intake.handle(f.message("ble/meter/battery/level/get", ""))
        let inputs = await queued(device)
        guard inputs.count == 1, case .command(let pending) = inputs[0] else {
            Issue.record("expected one command, got \(inputs)")
            return
        }
        #expect(pending.operation == .get)
        #expect(pending.resultTopic == "ble/meter/battery/level/result")
    }

    @Test("an unknown device gets unknown_characteristic on the result topic and on its v5 response topic")
    func unknownDevice() async throws {
        let f = try Fixture()
        let known = f.addDevice("known")
        f.intake.handle(f.message(
            "ble/nosuch/180a/2a29/set", #"{"hex": "01", "transaction": 7}"#, responseTopic: "reply/here",
            correlation: [9, 8]))
        let result = f.broker.last("ble/nosuch/180a/2a29/result")
        #expect(result?.contains(#""status":"error""#) == true)
        #expect(result?.contains(#""code":"unknown_characteristic""#) == true)
        #expect(result?.contains(#""transaction":7"#) == true)
        let reply = f.broker.all.first { $0.message.topic == "reply/here" }
        #expect(reply?.text == result)
        #expect(reply?.message.correlationData == [9, 8])
        #expect(known.count == 0)
    }

    @Test("a target commands.allow does not name is answered not_allowed and never reaches the session")
    func notAllowed() async throws {
        let f = try Fixture(#"commands: { allow: ["thermostat/*/2a29"] }"#)
        let device = f.addDevice("thermostat")
        f.intake.handle(f.message("ble/thermostat/180a/2a2a/set", #"{"hex": "01"}"#))
        #expect(f.broker.last("ble/thermostat/180a/2a2a/result")?.contains(#""code":"not_allowed""#) == true)
        #expect(device.count == 0)
        f.intake.handle(f.message("ble/thermostat/180a/2a29/set", #"{"hex": "01"}"#))
        #expect(device.count == 1)
        #expect(f.broker.texts("ble/thermostat/180a/2a29/result").isEmpty)
    }

    @Test("bridge requests go to the supervisor with their message")
    func bridgeRequest() async throws {
        let f = try Fixture()
        f.intake.handle(f.message("ble/bridge/request/devices", "{}"))
        let inputs = await queued(f.supervisor)
        guard inputs.count == 1, case .request(let command, let message) = inputs[0] else {
            Issue.record("expected one request, got \(inputs)")
            return
        }
        #expect(command == "devices")
        #expect(message.topic == "ble/bridge/request/devices")
    }

    @Test("Home Assistant: `online` on its status and a retained legacy config go to the supervisor; the rest is dropped")
    func homeAssistant() async throws {
        let f = try Fixture("homeassistant: { discovery: true }")
        f.intake.handle(f.message("homeassistant/status", "offline"))
        f.intake.handle(f.message("homeassistant/status", "online"))
        f.intake.handle(f.message("homeassistant/sensor/ble_aabbccddee01/temperature/config", ""))
        f.intake.handle(f.message("homeassistant/sensor/ble_aabbccddee01/temperature/config", "{}"))
        f.intake.handle(f.message("homeassistant/sensor/someone_else/temperature/config", "{}"))
        let inputs = await queued(f.supervisor)
        try #require(inputs.count == 2)
        guard case .homeAssistantOnline = inputs[0] else {
            Issue.record("expected homeAssistantOnline, got \(inputs[0])")
            return
        }
        guard case .legacyDiscovery(let topic) = inputs[1] else {
            Issue.record("expected legacyDiscovery, got \(inputs[1])")
            return
        }
        #expect(topic == "homeassistant/sensor/ble_aabbccddee01/temperature/config")
        #expect(f.broker.all.isEmpty)
    }

    @Test("the filters it takes: commands and requests, and Home Assistant's only with discovery")
    func filters() throws {
        let plain = try Fixture()
        #expect(CommandIntake.filters(topics: plain.topics, homeAssistantDiscovery: false)
            == ["ble/+/+/+/set", "ble/+/+/+/get", "ble/bridge/request/+", "ble/bridge/request/device/+", "ble/config/devices/+"])
        let ha = try Fixture("homeassistant: { discovery: true }")
        #expect(CommandIntake.filters(topics: ha.topics, homeAssistantDiscovery: true)
            == ["ble/+/+/+/set", "ble/+/+/+/get", "ble/bridge/request/+", "ble/bridge/request/device/+", "ble/config/devices/+",
                "homeassistant/status",
                "homeassistant/sensor/+/+/config"])
    }

    @Test("run takes a stream's messages in order until it finishes")
    func runTakesTheStream() async throws {
        let f = try Fixture()
        let device = f.addDevice("d1")
        let (messages, input) = AsyncStream.makeStream(of: MQTTMessage.self)
        for n in 1...3 { input.yield(f.message("ble/d1/s/c\(n)/get", "")) }
        input.finish()
        await f.intake.run(messages)
        let characteristics = await queued(device).compactMap { input -> String? in
            guard case .command(let pending) = input else { return nil }
            return pending.characteristic
        }
        #expect(characteristics == ["c1", "c2", "c3"])
    }

    @Test("a profile command's topic: commands.allow matches {device}/command/{name}; refused, the result says op command; allowed, the session gets it with its name and parameters")
    func profileCommandAllowList() async throws {
        let f = try Fixture(#"commands: { allow: ["bot/command/press"] }"#)
        let bot = f.addDevice("bot")
        f.intake.handle(f.message("ble/bot/command/unlock/set", ""))
        let refused = try #require(f.broker.last("ble/bot/command/unlock/result"))
        #expect(refused.contains(#""op":"command""#) && refused.contains(#""code":"not_allowed""#), "\(refused)")
        f.intake.handle(f.message("ble/bot/command/press/set", #"{"transaction": 1, "hold": 2}"#))
        let inputs = await queued(bot)
        try #require(inputs.count == 1)
        guard case .command(let pending) = inputs[0] else {
            Issue.record("expected a command, got \(inputs[0])")
            return
        }
        #expect(pending.profileCommand == "press")
        #expect(pending.resultTopic == "ble/bot/command/press/result")
        #expect(pending.profilePayload?.parameters == ["hold": .integer(2)])
        #expect(pending.transaction == .integer(1))
    }
}
