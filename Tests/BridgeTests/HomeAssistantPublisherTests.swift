import BridgeCore
import MQTT
import Testing

@testable import Bridge

/// Home Assistant discovery in the runtime: device configs after the legacy window, per-entity
/// configs of earlier versions migrated before them, last values again after HA's birth.
@Suite struct HomeAssistantPublisherTests {
    static let legacy = "homeassistant/sensor/ble_e45f01abcdef/181a_2a6e/config"
    static let device = "homeassistant/device/ble_e45f01abcdef/config"

    @Test("an earlier version's retained config is migrated, then cleared, before the device config; values follow it")
    func legacyMigration() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["181a"] }
            homeassistant: { discovery: true }
            """)
        h.central.addDevice("E4:5F:01:AB:CD:EF", name: "Thermo", services: ["181a": [("2a6e", ["read", "notify"], [0x34, 0x08])]])
        // The broker is there from the start (the supervisor learns it first), and delivers the
        // retained old config right after the subscription.
        h.runtime.supervisorMailbox.send(.brokerConnected)
        h.runtime.intake.handle(MQTTMessage(
            topic: Self.legacy, payload: Array(#"{"name":"Temperature"}"#.utf8), qos: 1, retain: true,
            responseTopic: nil, correlationData: nil))
        try await h.run {
            try await h.eventually("the device config") { h.broker.last(Self.device) != nil }
            try await h.eventually("the value sent again after the config") {
                h.broker.texts("ble/e45f01abcdef/181a/2a6e").count >= 2
            }
        }
        let topics = h.broker.all.map(\.message.topic)
        let legacy = h.broker.all.filter { $0.message.topic == Self.legacy }
        #expect(legacy.map(\.text) == [#"{"migrate_discovery": true}"#, ""], "\(legacy.map(\.text))")
        #expect(legacy.last?.message.retain == true, "the clearing message is retained")
        let lastLegacy = try #require(topics.lastIndex(of: Self.legacy))
        let firstConfig = try #require(topics.firstIndex(of: Self.device))
        #expect(lastLegacy < firstConfig, "migrated and cleared before the device config")
        let firstValue = try #require(topics.firstIndex(of: "ble/e45f01abcdef/181a/2a6e"))
        #expect(topics.lastIndex(of: "ble/e45f01abcdef/181a/2a6e")! > firstConfig, "a value after the config")
        _ = firstValue
        #expect(topics.contains("homeassistant/device/ble_mqtt_bridge_ble-mqtt-bridge-test/config"), "the bridge device")
    }

    @Test("Home Assistant's birth message: configs again, then every last value")
    func birthMessage() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["181a"] }
            homeassistant: { discovery: true }
            """)
        h.central.addDevice("E4:5F:01:AB:CD:EF", name: "Thermo", services: ["181a": [("2a6f", ["read"], [0x10, 0x17])]])
        h.runtime.supervisorMailbox.send(.brokerConnected)
        try await h.run {
            try await h.eventually("the value read once") { !h.broker.texts("ble/e45f01abcdef/181a/2a6f").isEmpty }
            try await h.advance(.seconds(5))
            let values = h.broker.texts("ble/e45f01abcdef/181a/2a6f").count
            let configs = h.broker.texts(Self.device).count
            h.runtime.intake.handle(MQTTMessage(
                topic: "homeassistant/status", payload: Array("online".utf8), qos: 1, retain: false, responseTopic: nil,
                correlationData: nil))
            try await h.eventually("the config again") { h.broker.texts(Self.device).count > configs }
            try await h.advance(.seconds(1))
            #expect(h.broker.texts("ble/e45f01abcdef/181a/2a6f").count == values, "not before the delay")
            try await h.eventually("the value again") { h.broker.texts("ble/e45f01abcdef/181a/2a6f").count > values }
        }
        #expect(h.central.calls("ReadValue").count == 1, "sent again from memory, not read again")
    }
}
