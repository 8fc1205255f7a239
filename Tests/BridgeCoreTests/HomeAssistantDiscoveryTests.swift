import Testing

@testable import BridgeCore

/// Home Assistant discovery configs: which characteristics get one, and what it says.
@Suite struct HomeAssistantDiscoveryTests {
    static let topics = TopicMapper(baseTopic: "ble", discoveryPrefix: "ha")

    static func characteristic(_ uuid16: UInt16, _ format: ValueFormat, name: String? = "Polar H10 1234")
        -> HomeAssistantDiscovery.Characteristic
    {
        HomeAssistantDiscovery.Characteristic(
            device: "polar", address: "C8:12:34:56:78:9A", deviceName: name, service: "180f",
            characteristic: String(BluetoothUUID(uuid16: uuid16).shortForm), uuid: BluetoothUUID(uuid16: uuid16),
            format: format)
    }

    static func parse(_ bytes: [UInt8]) throws -> JSONValue { try JSONParser.parse(bytes) }

    @Test func battery() throws {
        let config = try #require(HomeAssistantDiscovery.config(for: Self.characteristic(0x2A19, .batteryLevel), topics: Self.topics))
        #expect(config.topic == "ha/sensor/ble_c8123456789a/180f_2a19/config")
        let json = try Self.parse(config.payload)
        #expect(json["name"]?.stringValue == "Battery")
        #expect(json["unique_id"]?.stringValue == "ble_c8123456789a_180f_2a19")
        #expect(json["state_topic"]?.stringValue == "ble/polar/180f/2a19")
        #expect(json["value_template"]?.stringValue == "{{ value_json.value }}")
        #expect(json["device_class"]?.stringValue == "battery")
        #expect(json["unit_of_measurement"]?.stringValue == "%")
        #expect(json["availability_mode"]?.stringValue == "all")
        let availability = json["availability"]?.arrayValue?.compactMap { $0["topic"]?.stringValue }
        #expect(availability == ["ble/bridge/state", "ble/polar/availability"])
        #expect(json["device"]?["identifiers"]?.arrayValue?.first?.stringValue == "ble_c8123456789a")
        #expect(json["device"]?["name"]?.stringValue == "Polar H10 1234")
        let connection = json["device"]?["connections"]?.arrayValue?.first?.arrayValue?.compactMap(\.stringValue)
        #expect(connection == ["bluetooth", "C8:12:34:56:78:9A"])
    }

    @Test func heartRateTemplateAndUnits() throws {
        let hr = try #require(HomeAssistantDiscovery.config(for: Self.characteristic(0x2A37, .heartRateMeasurement), topics: Self.topics))
        let json = try Self.parse(hr.payload)
        #expect(json["value_template"]?.stringValue == "{{ value_json.value.bpm }}")
        #expect(json["unit_of_measurement"]?.stringValue == "bpm")
        let temperature = try #require(HomeAssistantDiscovery.config(for: Self.characteristic(0x2A6E, .temperature), topics: Self.topics))
        #expect(try Self.parse(temperature.payload)["unit_of_measurement"]?.stringValue == "°C")
        #expect(try Self.parse(temperature.payload)["device_class"]?.stringValue == "temperature")
        let counter = try #require(HomeAssistantDiscovery.config(for: Self.characteristic(0xFFE1, .uint16, name: nil), topics: Self.topics))
        let counterJSON = try Self.parse(counter.payload)
        #expect(counterJSON["device_class"] == nil && counterJSON["state_class"]?.stringValue == "measurement")
        #expect(counterJSON["device"]?["name"]?.stringValue == "polar", "no advertised name: the topic segment")
    }

    @Test func hexValuesGetNoEntity() {
        #expect(HomeAssistantDiscovery.config(for: Self.characteristic(0x2B29, .hex), topics: Self.topics) == nil)
    }

    @Test func objectIDsAreSanitized() throws {
        var c = Self.characteristic(0x2A19, .batteryLevel)
        c.service = "6e400001-b5a3.f393"
        c.characteristic = "tx power"
        let config = try #require(HomeAssistantDiscovery.config(for: c, topics: Self.topics))
        #expect(config.topic == "ha/sensor/ble_c8123456789a/6e400001-b5a3_f393_tx_power/config")
        #expect(HomeAssistantDiscovery.statusTopic(Self.topics) == "ha/status")
    }
}
