import Testing

@testable import BridgeCore

/// Home Assistant discovery of the advertisement families (SPEC §13): every value name with its
/// device class, unit and state class, the binary sensors, the maker and model on the device.
@Suite struct HomeAssistantDiscoveryFamiliesTests {
    static let topics = TopicMapper(baseTopic: "ble", discoveryPrefix: "ha")
    static let bridge = HomeAssistantDiscovery.Bridge(clientID: "bridge", version: "1.2.3")

    /// The device config of an advertisement device whose packets decoded to `values`.
    static func config(
        _ values: [String: JSONValue], decoder: String = "govee", manufacturer: String? = nil, model: String? = nil,
        information: DeviceInformation = DeviceInformation()
    ) throws -> JSONValue {
        let p = HomeAssistantDiscovery.Peripheral(
            device: "sensor", address: "A4:C1:38:00:00:01", name: "GVH5075_1234", information: information,
            characteristics: [],
            advertised: .init(decoder: decoder, values: values, manufacturer: manufacturer, model: model))
        return try JSONParser.parse(HomeAssistantDiscovery.deviceConfig(p, bridge: bridge, topics: topics).payload)
    }

    /// SPEC §13's value names: device class (nil: none), unit, state class.
    static let sensors: [(name: String, sample: JSONValue, deviceClass: String?, unit: String?, stateClass: String)] = [
        ("temperature", .number(21.5), "temperature", "°C", "measurement"),
        ("humidity", .number(45.1), "humidity", "%", "measurement"),
        ("battery", .integer(91), "battery", "%", "measurement"),
        ("voltage", .number(3.1), "voltage", "V", "measurement"),
        ("pressure", .number(1013.2), "pressure", "hPa", "measurement"),
        ("illuminance", .integer(300), "illuminance", "lx", "measurement"),
        ("moisture", .integer(40), "moisture", "%", "measurement"),
        ("conductivity", .integer(350), "conductivity", "µS/cm", "measurement"),
        ("co2", .integer(600), "carbon_dioxide", "ppm", "measurement"),
        ("pm2_5", .integer(12), "pm25", "µg/m³", "measurement"),
        ("pm10", .integer(20), "pm10", "µg/m³", "measurement"),
        ("formaldehyde", .number(0.02), nil, "mg/m³", "measurement"),
        ("tvoc", .integer(150), "volatile_organic_compounds", "µg/m³", "measurement"),
        ("weight", .number(71.2), "weight", "kg", "measurement"),
        ("tank_level", .integer(312), "distance", "mm", "measurement"),
        ("dew_point", .number(9.4), "temperature", "°C", "measurement"),
        ("acceleration_x", .number(0.1), nil, "m/s²", "measurement"),
        ("acceleration_y", .number(-0.2), nil, "m/s²", "measurement"),
        ("acceleration_z", .number(9.8), nil, "m/s²", "measurement"),
        ("movement_counter", .integer(17), nil, nil, "measurement"),
        ("temperature_probe_1", .number(55.5), "temperature", "°C", "measurement"),
        ("temperature_probe_6", .number(-3.5), "temperature", "°C", "measurement"),
        ("battery_voltage", .number(12.8), "voltage", "V", "measurement"),
        ("battery_current", .number(-1.25), "current", "A", "measurement"),
        ("state_of_charge", .number(87.5), "battery", "%", "measurement"),
        ("solar_power", .integer(120), "power", "W", "measurement"),
        ("yield_today", .number(1.23), "energy", "kWh", "total_increasing"),
    ]

    @Test("every value name of SPEC §13 is a sensor with its device class, unit and state class", arguments: 0..<sensors.count)
    func sensorKinds(_ i: Int) throws {
        let row = Self.sensors[i]
        let json = try Self.config([row.name: row.sample])
        let e = try #require(json["components"]?["adv_" + row.name], "\(row.name)")
        #expect(e["platform"]?.stringValue == "sensor")
        #expect(e["device_class"]?.stringValue == row.deviceClass, "\(row.name)")
        #expect(e["unit_of_measurement"]?.stringValue == row.unit, "\(row.name)")
        #expect(e["state_class"]?.stringValue == row.stateClass, "\(row.name)")
        #expect(e["state_topic"]?.stringValue == "ble/sensor/advertisement")
    }

    @Test("entity names: the table's, numbered probes, pm2_5 as PM2.5")
    func names() throws {
        let json = try Self.config([
            "pm2_5": .integer(3), "temperature_probe_2": .number(20), "co2": .integer(500), "state_of_charge": .number(50),
        ])
        #expect(json["components"]?["adv_pm2_5"]?["name"]?.stringValue == "PM2.5")
        #expect(json["components"]?["adv_temperature_probe_2"]?["name"]?.stringValue == "Temperature probe 2")
        #expect(json["components"]?["adv_co2"]?["name"]?.stringValue == "CO2")
        #expect(json["components"]?["adv_state_of_charge"]?["entity_category"] == nil, "a reading, not a diagnostic")
    }

    @Test("opening, motion and battery_low are binary sensors: door, motion, battery")
    func binarySensors() throws {
        let json = try Self.config(["opening": .bool(true), "motion": .bool(false), "battery_low": .bool(false)])
        for (name, deviceClass) in [("opening", "door"), ("motion", "motion"), ("battery_low", "battery")] {
            let e = try #require(json["components"]?["adv_" + name], "\(name)")
            #expect(e["platform"]?.stringValue == "binary_sensor", "\(name)")
            #expect(e["device_class"]?.stringValue == deviceClass, "\(name)")
            #expect(e["value_template"]?.stringValue?.contains("'ON' if v['\(name)']") == true)
        }
    }

    @Test("the device carries the maker and model of the payload; a Device Information service wins")
    func manufacturerAndModel() throws {
        let json = try Self.config(["temperature": .number(20)], manufacturer: "Govee", model: "H5075")
        #expect(json["device"]?["manufacturer"]?.stringValue == "Govee")
        #expect(json["device"]?["model"]?.stringValue == "H5075")
        #expect(json["device"]?["name"]?.stringValue == "GVH5075_1234")
        let plain = try Self.config(["temperature": .number(20)])
        #expect(plain["device"]?["manufacturer"] == nil && plain["device"]?["model"] == nil)
        let both = try Self.config(
            ["temperature": .number(20)], manufacturer: "Govee", model: "H5075",
            information: DeviceInformation(manufacturer: "Acme", model: "X1"))
        #expect(both["device"]?["manufacturer"]?.stringValue == "Acme")
        #expect(both["device"]?["model"]?.stringValue == "X1")
    }
}
