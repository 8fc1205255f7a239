import Testing

@testable import BridgeCore

/// Home Assistant entities of self-describing characteristics (SPEC §11): unit, device class
/// and precision from the Presentation Format (0x2904), the name from the User Description (0x2901).
@Suite struct HomeAssistantPresentationTests {
    typealias C = HomeAssistantDiscovery.Characteristic
    static let uuid = BluetoothUUID("5e1f0002-1234-5678-9abc-def012345678")!

    static func sensor(_ presentation: PresentationFormat?, description: String? = nil, format: ValueFormat = .hex)
        throws -> JSONValue
    {
        let c = C(
            service: "env", characteristic: uuid.shortForm, uuid: uuid, format: format, canNotify: true, canRead: false,
            presentation: presentation, userDescription: description)
        let p = HomeAssistantDiscovery.Peripheral(device: "thermo", address: "E4:5F:01:AB:CD:EF", name: "Thermo", characteristics: [c])
        let message = HomeAssistantDiscovery.deviceConfig(
            p, bridge: HomeAssistantDiscovery.Bridge(clientID: "b", version: "1"), topics: TopicMapper(baseTopic: "ble", discoveryPrefix: "ha"))
        let json = try JSONParser.parse(message.payload)
        return try #require(json["components"]?[HomeAssistantDiscovery.sanitize("env_" + uuid.shortForm)])
    }

    @Test func unitDeviceClassAndName() throws {
        let s = try Self.sensor(PresentationFormat(format: .sint16, exponent: -2, unit: 0x272F), description: "Outdoor temperature")
        #expect(s["platform"] == .string("sensor"))
        #expect(s["name"] == .string("Outdoor temperature"))
        #expect(s["unit_of_measurement"] == .string("°C"))
        #expect(s["device_class"] == .string("temperature"))
        #expect(s["state_class"] == .string("measurement"))
        #expect(s["suggested_display_precision"] == .integer(2))
        #expect(s["value_template"] == .string(HomeAssistantEntities.numericTemplate))
        #expect(s["enabled_by_default"] == nil, "a described value is shown, unlike undescribed hex")
        // The entity id keeps the characteristic's segment (two described temperatures do not collide).
        #expect(s["default_entity_id"]?.stringValue?.hasSuffix("5e1f0002_1234_5678_9abc_def012345678") == true, "\(s)")
    }

    @Test func withoutDescriptionOrDeviceClass() throws {
        // A device class names the entity when there is no description.
        let kwh = try Self.sensor(PresentationFormat(format: .uint32, exponent: -3, unit: 0x27AB))
        #expect(kwh["name"] == .string("Energy"))
        #expect(kwh["state_class"] == .string("total_increasing"))
        // No device class (percent, ppm): unit only, named by the UUID's first digits.
        let percent = try Self.sensor(PresentationFormat(format: .uint8, unit: 0x27AD))
        #expect(percent["name"] == .string("5e1f0002"))
        #expect(percent["unit_of_measurement"] == .string("%"))
        #expect(percent["device_class"] == nil)
        // Unitless.
        let plain = try Self.sensor(PresentationFormat(format: .float32))
        #expect(plain["unit_of_measurement"] == nil && plain["state_class"] == .string("measurement"))
    }

    @Test func textAndBooleans() throws {
        let text = try Self.sensor(PresentationFormat(format: .utf16s), description: "Label")
        #expect(text["value_template"] == .string("{{ value_json.value[:255] }}"))
        #expect(text["state_class"] == nil && text["unit_of_measurement"] == nil)
        #expect(text["name"] == .string("Label"))
        let flag = try Self.sensor(PresentationFormat(format: .boolean))
        #expect(flag["value_template"] == .string("{{ value_json.value if value_json.value is boolean else None }}"))
    }

    @Test func withoutPresentationNothingChanges() throws {
        let hex = try Self.sensor(nil)
        #expect(hex["value_template"] == .string("{{ value_json.raw[:255] }}"))
        #expect(hex["unit_of_measurement"] == nil)
        // A user description alone names the entity.
        let named = try Self.sensor(nil, description: "Raw data")
        #expect(named["name"] == .string("Raw data"))
    }
}

extension HomeAssistantPresentationTests {
    static func sig(_ uuid16: UInt16, _ format: ValueFormat, _ presentation: PresentationFormat) throws -> JSONValue {
        let uuid = BluetoothUUID(uuid16: uuid16)
        let c = C(
            service: "180f", characteristic: uuid.shortForm, uuid: uuid, format: format, canNotify: false, canRead: true,
            presentation: presentation)
        let p = HomeAssistantDiscovery.Peripheral(device: "thermo", address: "E4:5F:01:AB:CD:EF", name: "Thermo", characteristics: [c])
        let message = HomeAssistantDiscovery.deviceConfig(
            p, bridge: HomeAssistantDiscovery.Bridge(clientID: "b", version: "1"), topics: TopicMapper(baseTopic: "ble", discoveryPrefix: "ha"))
        return try #require(try JSONParser.parse(message.payload)["components"]?["180f_" + uuid.shortForm])
    }

    @Test func sigCharacteristicsKeepTheirKindWhereTheUnitSaysLess() throws {
        // Battery level with "uint8, percentage": still a battery (diagnostic), entity id by its kind.
        let battery = try Self.sig(0x2A19, .batteryLevel, PresentationFormat(format: .uint8, unit: 0x27AD))
        #expect(battery["device_class"] == .string("battery"))
        #expect(battery["entity_category"] == .string("diagnostic"))
        #expect(battery["default_entity_id"] == .string("sensor.thermo_battery"))
        // Temperature with its unit: the presentation's kind (the same class), precision from the exponent.
        let temperature = try Self.sig(0x2A6E, .temperature, PresentationFormat(format: .sint16, exponent: -1, unit: 0x272F))
        #expect(temperature["device_class"] == .string("temperature"))
        #expect(temperature["suggested_display_precision"] == .integer(1))
        #expect(temperature["default_entity_id"] == .string("sensor.thermo_temperature"))
        // Body sensor location is an enum of codes: a presentation format makes it a plain number.
        let location = try Self.sig(0x2A38, .bodySensorLocation, PresentationFormat(format: .uint8))
        #expect(location["device_class"] == nil && location["options"] == nil)
    }
}
