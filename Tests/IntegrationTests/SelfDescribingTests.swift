import Foundation
import Testing

/// Self-describing characteristics (SPEC §11) on bluez-sim: a characteristic whose Presentation
/// Format descriptor (0x2904) says sint16, exponent -2, °C and whose User Description (0x2901)
/// says "Outdoor temperature" is published as a number in °C, and Home Assistant's discovery
/// shows it with that unit, the temperature device class and that name.
@Suite(.serialized) struct SelfDescribingTests {
    static let address = "C0:FF:EE:00:29:04"
    static let device = "c0ffee002904"
    static let service = "6e5a0020-0000-4000-8000-00000000abcd"
    static let outdoor = "6e5a0021-0000-4000-8000-00000000abcd"
    static let named = "6e5a0022-0000-4000-8000-00000000abcd"
    static let setpoint = "6e5a0023-0000-4000-8000-00000000abcd"

    static let scenario = """
        settings:
          advertise_delay: 100ms
          connect_delay: 50ms
          resolve_delay: 100ms
          resolve_delay_cached: 50ms
          gatt_export_time: 50ms
          disconnect_delay: 50ms
        adapters:
          - name: hci0
            address: "00:11:22:33:44:66"
        devices:
          - name: Weather Sim
            address: "\(address)"
            advertise: ["\(service)"]
            services:
              - uuid: "\(service)"
                characteristics:
                  - uuid: "\(outdoor)"
                    flags: [read, notify]
                    value: "2909"
                    descriptors:
                      - { uuid: "2904", value: "0e fe 2f 27 01 00 00" }
                      - { uuid: "2901", value_text: "Outdoor temperature" }
                  - uuid: "\(named)"
                    flags: [read]
                    value: "e803"
                    descriptors:
                      - { uuid: "2904", value: "06 ff ad 27 01 00 00" }
                      - { uuid: "2901", value_text: "Not used: the name is configured" }
                  - uuid: "\(setpoint)"
                    flags: [read, write]
                    value: "c800"
                    descriptors:
                      - { uuid: "2904", value: "06 ff 2f 27 01 00 00" }

        """

    @Test("published in °C (2909 → 23.45); discovery: unit °C, device class temperature, named by the user description; writes encoded by it")
    func presentationAndDescription() async throws {
        var options = HarnessOptions()
        options.scenarioText = Self.scenario
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            bluetooth:
              adapter: hci0
              services: ["\(Self.service)"]
            reconnect: { initial_delay: 200ms, max_delay: 1s }
            homeassistant: { discovery: true, prefix: ha }
            devices:
              - match: { address: "\(Self.address)" }
                characteristics:
                  - { uuid: "\(Self.named)", name: humidity }

            """
        }
        try await Harness.with(options) { harness in
            let topic = "ble/\(Self.device)/\(Self.service)/\(Self.outdoor)"
            let value = try await harness.waitFor(topic, timeout: .seconds(30))
            #expect(value.object?["raw"] as? String == "2909", "\(value)")
            #expect(value.object?["value"] as? Double == 23.45, "\(value)")
            #expect(value.payload == #"{"raw":"2909","value":23.45}"#, "\(value)")
            // uint16, exponent -1, percent: 1000 → 100.0; its topic segment is the configured name.
            let humidity = try await harness.waitFor("ble/\(Self.device)/\(Self.service)/humidity")
            #expect(humidity.payload == #"{"raw":"e803","value":100.0}"#, "\(humidity)")

            // The device config that has the characteristic (one from before the setup has not).
            let components = try await Self.components(harness, topic: topic)
            let sensor = try #require(Self.sensor(components, topic: topic), "\(components)")
            #expect(sensor["unit_of_measurement"] as? String == "°C", "\(sensor)")
            #expect(sensor["device_class"] as? String == "temperature", "\(sensor)")
            #expect(sensor["name"] as? String == "Outdoor temperature", "\(sensor)")
            #expect(sensor["suggested_display_precision"] as? Int == 2, "\(sensor)")
            let other = try #require(
                Self.sensor(components, topic: "ble/\(Self.device)/\(Self.service)/humidity"), "\(components)")
            #expect(other["unit_of_measurement"] as? String == "%", "\(other)")
            #expect(other["name"] as? String == "humidity", "a configured name is not replaced: \(other)")
            // Each descriptor the bridge needs was read once, in this one connection.
            let decoded = ChildProcess.read(harness.bridgeLogPath).split(separator: "\n").filter { $0.contains("decoded by its presentation format") }
            #expect(decoded.count == 3, "\(decoded)")
            let named = ChildProcess.read(harness.bridgeLogPath).split(separator: "\n").filter { $0.contains("by its user description") }
            #expect(named.count == 1, "only the unnamed characteristic's: \(named)")

            // A write is encoded by the presentation format too: uint16, exponent -1 (20.0 °C as read).
            let setpoint = "ble/\(Self.device)/\(Self.service)/\(Self.setpoint)"
            let first = try await harness.waitFor(setpoint)
            #expect(first.payload == #"{"raw":"c800","value":20.0}"#, "\(first)")
            let mark = harness.observer.count
            try await harness.publish("\(setpoint)/set", "21.5")
            let result = try await harness.waitFor("\(setpoint)/result", after: mark)
            #expect(result.object?["status"] as? String == "ok", "\(result)")
            try await harness.publish("\(setpoint)/get", "")
            let read = try await harness.waitFor(setpoint, after: mark)
            #expect(read.payload == #"{"raw":"d700","value":21.5}"#, "\(read)")
            let refused = harness.observer.count
            try await harness.publish("\(setpoint)/set", "-3")
            let error = try await harness.waitFor("\(setpoint)/result", after: refused) { $0.object?["op"] as? String == "write" }
            #expect(error.object?["status"] as? String == "error", "\(error)")
            let detail = error.object?["error"] as? [String: Any]
            #expect(detail?["code"] as? String == "invalid_payload", "\(error)")
            #expect((detail?["message"] as? String)?.contains("out of range for uint16") == true, "\(error)")
        }
    }

    /// The components of the device's retained discovery config once it has a sensor on `topic`.
    static func components(_ harness: Harness, topic: String) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + .seconds(15)
        while true {
            let config = try await harness.retained("ha/device/ble_\(device)/config")
            if let components = config.object?["components"] as? [String: Any], sensor(components, topic: topic) != nil {
                return components
            }
            guard ContinuousClock.now < deadline else { throw HarnessError("no discovery config with \(topic): \(config)") }
            try await Task.sleep(for: .milliseconds(200))
        }
    }

    /// The sensor component whose state topic is `topic`.
    static func sensor(_ components: [String: Any], topic: String) -> [String: Any]? {
        components.values.compactMap { $0 as? [String: Any] }.first {
            $0["platform"] as? String == "sensor" && $0["state_topic"] as? String == topic
        }
    }
}
