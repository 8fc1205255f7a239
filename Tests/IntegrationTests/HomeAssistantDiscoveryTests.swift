import Foundation
import Testing

/// `homeassistant.discovery: true`: retained sensor configs for the characteristics with a
/// meaningful format, sent again when Home Assistant says `online`, cleared on `forget`.
@Suite(.serialized) struct HomeAssistantDiscoveryIntegrationTests {
    static func options() -> HarnessOptions {
        var options = HarnessOptions()
        options.config = { port in
            Harness.defaultConfig(port: port) + """
                homeassistant: { discovery: true, prefix: ha }

                """
        }
        return options
    }

    static let batteryTopic = "ha/sensor/ble_\(Demo.heartRate)/180f_2a19/config"
    static let heartRateTopic = "ha/sensor/ble_\(Demo.heartRate)/180d_2a37/config"

    @Test("discovery configs: retained, pointing at the value topics; again after a broker restart and on ha/status online; cleared on forget")
    func discovery() async throws {
        try await Harness.with(Self.options()) { harness in
            try await harness.waitFor("ble/\(Demo.heartRate)/availability") { $0.payload == "online" }
            // What Home Assistant finds when it subscribes.
            let battery = try await harness.retained(Self.batteryTopic)
            #expect(battery.retained, "\(battery)")
            let config = try #require(battery.object, "not JSON: \(battery)")
            #expect(config["state_topic"] as? String == "ble/\(Demo.heartRate)/180f/2a19", "\(config)")
            #expect(config["device_class"] as? String == "battery" && config["unit_of_measurement"] as? String == "%")
            #expect(config["value_template"] as? String == "{{ value_json.value }}")
            let availability = (config["availability"] as? [[String: Any]])?.compactMap { $0["topic"] as? String }
            #expect(availability == ["ble/bridge/state", "ble/\(Demo.heartRate)/availability"], "\(config)")
            let hr = try await harness.retained(Self.heartRateTopic)
            #expect(hr.object?["value_template"] as? String == "{{ value_json.value.bpm }}", "\(hr)")
            // The value topic carries what the template reads.
            let value = try await harness.waitFor("ble/\(Demo.heartRate)/180f/2a19")
            #expect(value.object?["value"] is Int, "\(value)")

            // The broker restarts without persistence (retained messages lost): the bridge sends
            // the configs again once it is back.
            let beforeRestart = harness.observer.count
            try await harness.restartBroker(down: .seconds(1))
            // The bridge is back (it publishes its state first, then the configs).
            try await harness.waitFor("ble/bridge/state", after: beforeRestart) { $0.payload == "online" }
            let again = try await harness.retained(Self.batteryTopic)
            #expect(again.retained && again.object?["state_topic"] as? String == "ble/\(Demo.heartRate)/180f/2a19", "\(again)")

            // Home Assistant restarts and asks for the configs again.
            let watcher = try await MQTTObserver.start(
                broker: try #require(harness.broker), filters: ["ha/sensor/#"], directory: harness.directory, name: "ha")
            let before = watcher.count
            try await harness.publish("ha/status", "online")
            try await watcher.waitFor(Self.batteryTopic, after: before, timeout: .seconds(10), context: { "" }) {
                !$0.retained && $0.object?["state_topic"] != nil
            }

            // forget: the device's entities go away (an empty retained config). A peripheral that
            // still advertises a service of `bluetooth.services` is found and announced again later.
            let beforeForget = watcher.count
            try await harness.publish("ble/bridge/request/forget", #"{"device": "\#(Demo.heartRate)"}"#)
            try await harness.waitFor("ble/bridge/response/forget")
            try await watcher.waitFor(Self.batteryTopic, after: beforeForget, timeout: .seconds(10), context: { "" }) {
                $0.payload.isEmpty
            }
            try await watcher.waitFor(Self.heartRateTopic, after: beforeForget, timeout: .seconds(10), context: { "" }) {
                $0.payload.isEmpty
            }
            await watcher.stop()
            // Other devices keep theirs.
            let env = try await harness.retained("ha/sensor/ble_\(Demo.environment)/181a_2a6e/config")
            #expect(env.object?["device_class"] as? String == "temperature", "\(env)")
        }
    }
}
