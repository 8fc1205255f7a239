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

    static let heartRateTopic = "ha/device/ble_\(Demo.heartRate)/config"

    @Test("device discovery: retained, pointing at the value topics; again after a broker restart and on ha/status online, with the last values; cleared on forget")
    func discovery() async throws {
        try await Harness.with(Self.options()) { harness in
            try await harness.waitFor("ble/\(Demo.heartRate)/availability") { $0.payload == "online" }
            // What Home Assistant finds when it subscribes.
            let device = try await harness.retained(Self.heartRateTopic)
            #expect(device.retained, "\(device)")
            let config = try #require(device.object, "not JSON: \(device)")
            let components = try #require(config["components"] as? [String: Any], "\(config)")
            let battery = try #require(components["180f_2a19"] as? [String: Any], "\(components.keys)")
            #expect(battery["platform"] as? String == "sensor")
            #expect(battery["state_topic"] as? String == "ble/\(Demo.heartRate)/180f/2a19", "\(battery)")
            #expect(battery["device_class"] as? String == "battery" && battery["unit_of_measurement"] as? String == "%")
            let availability = (config["availability"] as? [[String: Any]])?.compactMap { $0["topic"] as? String }
            #expect(availability == ["ble/bridge/state", "ble/\(Demo.heartRate)/availability"], "\(config)")
            let via = (config["device"] as? [String: Any])?["via_device"] as? String
            let bridgeNode = try #require(via, "\(config)")
            let bridge = try await harness.retained("ha/device/\(bridgeNode)/config")
            #expect(((bridge.object?["device"] as? [String: Any])?["identifiers"] as? [String]) == [bridgeNode], "\(bridge)")
            // The value topic carries what the template reads.
            let value = try await harness.waitFor("ble/\(Demo.heartRate)/180f/2a19")
            #expect(value.object?["value"] is Int, "\(value)")

            // The broker restarts without persistence (retained messages lost): the bridge sends
            // the configs again once it is back.
            let beforeRestart = harness.observer.count
            try await harness.restartBroker(down: .seconds(1))
            // The bridge is back (it publishes its state first, then the configs).
            try await harness.waitFor("ble/bridge/state", after: beforeRestart) { $0.payload == "online" }
            let again = try await harness.retained(Self.heartRateTopic)
            #expect(again.retained && again.object?["components"] != nil, "\(again)")

            // Home Assistant restarts: the configs again, then the last values, also of the
            // characteristic read only once (body sensor location).
            let watcher = try await MQTTObserver.start(
                broker: try #require(harness.broker), filters: ["ha/device/#"], directory: harness.directory, name: "ha")
            let before = watcher.count
            let valuesBefore = harness.observer.count
            try await harness.publish("ha/status", "online")
            try await watcher.waitFor(Self.heartRateTopic, after: before, timeout: .seconds(10), context: { "" }) {
                !$0.retained && $0.object?["components"] != nil
            }
            let location = try await harness.waitFor("ble/\(Demo.heartRate)/180d/2a38", after: valuesBefore, timeout: .seconds(10))
            #expect(location.object?["value"] as? Int == 1, "\(location)")

            // forget: the device's entities go away (an empty retained config). A peripheral that
            // still advertises a service of `bluetooth.services` is found and announced again later.
            let beforeForget = watcher.count
            try await harness.publish("ble/bridge/request/forget", #"{"device": "\#(Demo.heartRate)"}"#)
            try await harness.waitFor("ble/bridge/response/forget")
            try await watcher.waitFor(Self.heartRateTopic, after: beforeForget, timeout: .seconds(10), context: { "" }) {
                $0.payload.isEmpty
            }
            await watcher.stop()
            // Other devices keep theirs.
            let env = try await harness.retained("ha/device/ble_\(Demo.environment)/config")
            let envComponents = env.object?["components"] as? [String: Any]
            #expect((envComponents?["181a_2a6e"] as? [String: Any])?["device_class"] as? String == "temperature", "\(env)")
        }
    }
}
