import BridgeCore
import Testing

@testable import Bridge

/// Self-describing characteristics (SPEC §11) over the fake BlueZ: the descriptors are read
/// through the seam, once per connection, before the value; reads, notifications and `/get`
/// are decoded by the presentation format; Home Assistant gets its unit, device class and name.
@Suite struct SelfDescribingRuntimeTests {
    static let service = "5e1f0001-1234-5678-9abc-def012345678"
    static let characteristic = "5e1f0002-1234-5678-9abc-def012345678"
    static let topic = "ble/e45f01abcdef/\(service)/\(characteristic)"
    static let config = "homeassistant/device/ble_e45f01abcdef/config"

    /// A thermometer whose one characteristic says: sint16, exponent -2, °C, "Outdoor temperature".
    static func harness() throws -> (RuntimeHarness, String) {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["\(service)"] }
            homeassistant: { discovery: true }
            """)
        let device = h.central.addDevice(
            "E4:5F:01:AB:CD:EF", name: "Thermo", services: [service: [(characteristic, ["read", "notify"], [0x29, 0x09])]])
        let path = h.central.characteristicPath(device: device, characteristic)
        h.central.addDescriptor(characteristic: path, uuid: "2904", value: [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x00, 0x00])
        h.central.addDescriptor(characteristic: path, uuid: "2901", value: Array("Outdoor temperature".utf8))
        return (h, path)
    }

    @Test("the value is published in °C, notifications and /get too; discovery has the unit, class and name")
    func decodedAndNamed() async throws {
        let (h, path) = try Self.harness()
        h.runtime.supervisorMailbox.send(.brokerConnected)
        try await h.run {
            try await h.eventually("the value read") { !h.broker.texts(Self.topic).isEmpty }
            try await h.eventually("the device config") { h.broker.last(Self.config) != nil }
            h.central.notify(path, [0xD7, 0xF6])
            try await h.eventually("the notification") { h.broker.texts(Self.topic).contains(#"{"raw":"d7f6","value":-23.45}"#) }
            h.command(Self.topic + "/get", "{}")
            try await h.eventually("the /get result") { h.broker.last(Self.topic + "/result") != nil }
        }
        #expect(h.broker.texts(Self.topic).first == #"{"raw":"2909","value":23.45}"#)
        let result = try JSONParser.parse(try #require(h.broker.last(Self.topic + "/result")))
        #expect(result["value"] == .number(23.45), "\(result)")
        // Both descriptors read once, before the characteristic's first read.
        let calls = h.central.calls.map(\.method).filter { $0 == "ReadDescriptor" || $0 == "ReadValue" }
        #expect(calls.prefix(3) == ["ReadDescriptor", "ReadDescriptor", "ReadValue"], "\(calls)")
        #expect(h.central.calls("ReadDescriptor").count == 2)

        let config = try JSONParser.parse(try #require(h.broker.last(Self.config)))
        let components = try #require(config["components"]?.objectValue)
        let sensor = try #require(components.members.map(\.value).first {
            $0["platform"] == .string("sensor") && $0["state_topic"] == .string(Self.topic)
        })
        #expect(sensor["unit_of_measurement"] == .string("°C"))
        #expect(sensor["device_class"] == .string("temperature"))
        #expect(sensor["state_class"] == .string("measurement"))
        #expect(sensor["name"] == .string("Outdoor temperature"))
        #expect(sensor["suggested_display_precision"] == .integer(2))
        #expect(sensor["value_template"] == .string("{{ value_json.value if value_json.value is number else None }}"))
        #expect(sensor["enabled_by_default"] == nil, "shown, unlike undescribed hex values")
    }

    @Test("a configured format wins: its presentation format is not read (nor, without discovery, its user description)")
    func configuredFormatWins() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["\(Self.service)"] }
            devices:
              - match: { address: "E4:5F:01:AB:CD:EF" }
                characteristics:
                  - { uuid: "\(Self.characteristic)", format: uint16 }
            """)
        let device = h.central.addDevice(
            "E4:5F:01:AB:CD:EF", name: "Thermo",
            services: [Self.service: [(Self.characteristic, ["read", "notify"], [0x29, 0x09])]])
        let path = h.central.characteristicPath(device: device, Self.characteristic)
        h.central.addDescriptor(characteristic: path, uuid: "2904", value: [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x00, 0x00])
        h.central.addDescriptor(characteristic: path, uuid: "2901", value: Array("Outdoor temperature".utf8))
        h.runtime.supervisorMailbox.send(.brokerConnected)
        try await h.run {
            try await h.eventually("the value read") { !h.broker.texts(Self.topic).isEmpty }
        }
        #expect(h.broker.texts(Self.topic).first == #"{"raw":"2909","value":2345}"#)
        // No discovery: the user description is not needed either.
        #expect(h.central.calls("ReadDescriptor").isEmpty)
    }
}
