import ConfigLoader
import Testing

@testable import BridgeCore

/// Home Assistant device-based discovery: the device blocks, which entities each characteristic
/// gets, and what they say.
@Suite struct HomeAssistantDiscoveryTests {
    typealias C = HomeAssistantDiscovery.Characteristic
    static let topics = TopicMapper(baseTopic: "ble", discoveryPrefix: "ha")
    static let bridge = HomeAssistantDiscovery.Bridge(clientID: "house/bridge 1", version: "1.2.3")

    static func c(
        _ uuid16: UInt16, _ format: ValueFormat, service: String = "180d", read: Bool = false, notify: Bool = false,
        write: Bool = false
    ) -> C {
        C(service: service, characteristic: BluetoothUUID(uuid16: uuid16).shortForm, uuid: BluetoothUUID(uuid16: uuid16),
          format: format, canNotify: notify, canRead: read, canWrite: write)
    }

    static func config(_ list: [C], name: String? = "Polar H10 1234", info: DeviceInformation = DeviceInformation()) throws
        -> (topic: String, json: JSONValue)
    {
        let p = HomeAssistantDiscovery.Peripheral(
            device: "polar", address: "C8:12:34:56:78:9A", name: name, information: info, characteristics: list)
        let message = HomeAssistantDiscovery.deviceConfig(p, bridge: bridge, topics: topics)
        return (message.topic, try JSONParser.parse(message.payload))
    }

    static func component(_ json: JSONValue, _ key: String) -> JSONValue? { json["components"]?[key] }

    @Test func deviceBlockOriginAndAvailability() throws {
        let info = DeviceInformation(
            manufacturer: "Polar", model: "H10", serial: "123", hardware: "B", firmware: "3.1", software: "3.2")
        let (topic, json) = try Self.config([Self.c(0x2A19, .batteryLevel, service: "180f", read: true)], info: info)
        #expect(topic == "ha/device/ble_c8123456789a/config")
        let device = try #require(json["device"])
        #expect(device["identifiers"]?.arrayValue?.first?.stringValue == "ble_c8123456789a")
        #expect(device["connections"]?.arrayValue?.first?.arrayValue?.compactMap(\.stringValue) == ["bluetooth", "C8:12:34:56:78:9A"])
        #expect(device["name"]?.stringValue == "Polar H10 1234")
        #expect(device["manufacturer"]?.stringValue == "Polar")
        #expect(device["model"]?.stringValue == "H10")
        #expect(device["serial_number"]?.stringValue == "123")
        #expect(device["hw_version"]?.stringValue == "B")
        #expect(device["sw_version"]?.stringValue == "3.1 (software 3.2)")
        #expect(device["via_device"]?.stringValue == "ble_mqtt_bridge_house_bridge_1")
        #expect(json["origin"]?["sw_version"]?.stringValue == "1.2.3")
        #expect(json["origin"]?["name"]?.stringValue == "ble-mqtt-bridge")
        #expect(json["availability_mode"]?.stringValue == "all")
        #expect(json["availability"]?.arrayValue?.compactMap { $0["topic"]?.stringValue } == ["ble/bridge/state", "ble/polar/availability"])
        #expect(json["object_id"] == nil)
    }

    /// `origin.support_url` only when `homeassistant.support_url` is configured (the project has
    /// no public home a default could name), in the bridge's and in every peripheral's config.
    @Test func supportURLOnlyWhenConfigured() throws {
        func parse(_ homeAssistant: String) throws -> BridgeConfig {
            try BridgeConfig.parse(
                yaml: "mqtt: { url: mqtt://h }\nhomeassistant: { \(homeAssistant) }\n", fileName: "b.yaml",
                environment: [:], hostName: "h")
        }
        let plain = try parse("discovery: true")
        let configured = try parse("discovery: true, support_url: https://wiki.example.org/ble")
        let peripheral = HomeAssistantDiscovery.Peripheral(
            device: "polar", address: "C8:12:34:56:78:9A", name: nil, information: DeviceInformation(),
            characteristics: [Self.c(0x2A19, .batteryLevel, service: "180f", read: true)])
        for (config, expected) in [(plain, nil), (configured, "https://wiki.example.org/ble")] as [(BridgeConfig, String?)] {
            let bridge = HomeAssistantDiscovery.Bridge(config: config, version: "1.2.3")
            #expect(bridge.supportURL == expected)
            for message in [
                HomeAssistantDiscovery.bridgeConfig(bridge, topics: Self.topics),
                HomeAssistantDiscovery.deviceConfig(peripheral, bridge: bridge, topics: Self.topics),
            ] {
                let origin = try #require(try JSONParser.parse(message.payload)["origin"]?.objectValue)
                #expect(origin["name"]?.stringValue == "ble-mqtt-bridge")
                #expect(origin["support_url"]?.stringValue == expected)
                #expect(origin.contains { $0.key == "support_url" } == (expected != nil), "\(message.topic)")
            }
        }
    }

    @Test func bridgeDevice() throws {
        let message = HomeAssistantDiscovery.bridgeConfig(Self.bridge, topics: Self.topics)
        #expect(message.topic == "ha/device/ble_mqtt_bridge_house_bridge_1/config")
        let json = try JSONParser.parse(message.payload)
        #expect(json["device"]?["sw_version"]?.stringValue == "1.2.3")
        #expect(json["device"]?["name"]?.stringValue == "house/bridge 1")
        let state = try #require(Self.component(json, "connectivity"))
        #expect(state["platform"]?.stringValue == "binary_sensor")
        #expect(state["device_class"]?.stringValue == "connectivity")
        #expect(state["state_topic"]?.stringValue == "ble/bridge/state")
        #expect(state["payload_on"]?.stringValue == "online" && state["payload_off"]?.stringValue == "offline")
        // Two bridges on one broker are two devices.
        let other = HomeAssistantDiscovery.bridgeConfig(.init(clientID: "garage", version: "1"), topics: Self.topics)
        #expect(other.topic != message.topic)
    }

    @Test func sensorsFromTheTable() throws {
        let (_, json) = try Self.config([
            Self.c(0x2A19, .batteryLevel, service: "180f", read: true, notify: true),
            Self.c(0x2A6E, .temperature, service: "181a", notify: true),
            Self.c(0x2A37, .heartRateMeasurement, notify: true),
            Self.c(0x2A38, .bodySensorLocation, read: true),
        ])
        let battery = try #require(Self.component(json, "180f_2a19"))
        #expect(battery["platform"]?.stringValue == "sensor")
        #expect(battery["unique_id"]?.stringValue == "ble_c8123456789a_180f_2a19", "the unique id of earlier versions")
        #expect(battery["default_entity_id"]?.stringValue == "sensor.polar_battery", "the kind names a UUID segment")
        #expect(battery["device_class"]?.stringValue == "battery")
        #expect(battery["unit_of_measurement"]?.stringValue == "%")
        #expect(battery["entity_category"]?.stringValue == "diagnostic")
        #expect(battery["state_topic"]?.stringValue == "ble/polar/180f/2a19")
        #expect(battery["value_template"]?.stringValue == HomeAssistantEntities.numericTemplate)
        let temperature = try #require(Self.component(json, "181a_2a6e"))
        #expect(temperature["unit_of_measurement"]?.stringValue == "°C")
        #expect(temperature["device_class"]?.stringValue == "temperature")
        #expect(temperature["entity_category"] == nil)
        #expect(Self.component(json, "181a_2a6e_refresh") == nil, "not readable: no refresh button")
        let hr = try #require(Self.component(json, "180d_2a37"))
        #expect(hr["unit_of_measurement"]?.stringValue == "bpm")
        #expect(hr["json_attributes_topic"]?.stringValue == "ble/polar/180d/2a37")
        #expect(hr["value_template"]?.stringValue?.contains("value_json.value.bpm") == true)
        let location = try #require(Self.component(json, "180d_2a38"))
        #expect(location["device_class"]?.stringValue == "enum")
        #expect(location["options"]?.arrayValue?.count == 7)
        #expect(location["state_class"] == nil && location["unit_of_measurement"] == nil)
        let refresh = try #require(Self.component(json, "180d_2a38_refresh"))
        #expect(refresh["platform"]?.stringValue == "button")
        #expect(refresh["command_topic"]?.stringValue == "ble/polar/180d/2a38/get")
    }

    @Test func controlEntities() throws {
        var level = Self.c(0xFF01, .uint8, service: "ffe0", read: true, write: true)
        level.characteristic = "level"
        var ranged = Self.c(0xFF02, .sint16, service: "ffe0", write: true)
        ranged.range = -5...5
        var pressed = Self.c(0xFF03, .hex, service: "ffe0", write: true)
        pressed.press = [0xAA, 0x01]
        let (_, json) = try Self.config([
            Self.c(0x2A39, .hex, write: true),
            level, ranged, pressed,
            Self.c(0xFF04, .hex, service: "ffe0", read: true, write: true),
            Self.c(0xFF05, .utf8, service: "ffe0", write: true),
        ])
        let reset = try #require(Self.component(json, "180d_2a39_press"))
        #expect(reset["platform"]?.stringValue == "button")
        #expect(reset["command_topic"]?.stringValue == "ble/polar/180d/2a39/set")
        #expect(reset["payload_press"]?.stringValue == #"{"raw": "01"}"#)
        #expect(Self.component(json, "180d_2a39") == nil, "write-only with a press payload: only the button")
        let number = try #require(Self.component(json, "ffe0_level"))
        #expect(number["platform"]?.stringValue == "number")
        #expect(number["min"]?.doubleValue == 0 && number["max"]?.doubleValue == 255 && number["step"]?.doubleValue == 1)
        #expect(number["state_topic"]?.stringValue == "ble/polar/ffe0/level")
        #expect(number["command_topic"]?.stringValue == "ble/polar/ffe0/level/set")
        let custom = try #require(Self.component(json, "ffe0_ff02"))
        #expect(custom["min"]?.doubleValue == -5 && custom["max"]?.doubleValue == 5)
        #expect(custom["state_topic"] == nil, "write-only: no state")
        let press = try #require(Self.component(json, "ffe0_ff03_press"))
        #expect(press["payload_press"]?.stringValue == #"{"raw": "aa01"}"#)
        let hexText = try #require(Self.component(json, "ffe0_ff04"))
        #expect(hexText["platform"]?.stringValue == "text")
        #expect(hexText["command_template"]?.stringValue == #"{"raw": "{{ value }}"}"#)
        #expect(hexText["pattern"] != nil)
        #expect(hexText["value_template"]?.stringValue?.contains("value_json.raw") == true)
        let utf8Text = try #require(Self.component(json, "ffe0_ff05"))
        #expect(utf8Text["command_template"]?.stringValue == #"{"value": {{ value | tojson }}}"#)
        #expect(utf8Text["pattern"] == nil)
    }

    @Test func diagnosticsPerDevice() throws {
        let (_, json) = try Self.config([])
        let connectivity = try #require(Self.component(json, "connectivity"))
        #expect(connectivity["state_topic"]?.stringValue == "ble/polar/availability")
        #expect(connectivity["availability"]?.arrayValue?.count == 1, "available while the bridge is")
        let rssi = try #require(Self.component(json, "rssi"))
        #expect(rssi["device_class"]?.stringValue == "signal_strength")
        #expect(rssi["unit_of_measurement"]?.stringValue == "dBm")
        #expect(rssi["enabled_by_default"]?.boolValue == false)
        #expect(rssi["state_topic"]?.stringValue == "ble/bridge/health")
        #expect(rssi["value_template"]?.stringValue?.contains("value_json.devices['polar']") == true)
        // No health topic, no RSSI sensor.
        let p = HomeAssistantDiscovery.Peripheral(device: "polar", address: "C8:12:34:56:78:9A", name: nil, characteristics: [])
        let quiet = HomeAssistantDiscovery.deviceConfig(
            p, bridge: .init(clientID: "b", version: "1", health: false), topics: Self.topics)
        #expect(try JSONParser.parse(quiet.payload)["components"]?["rssi"] == nil)
        #expect(try JSONParser.parse(quiet.payload)["device"]?["name"]?.stringValue == "polar", "no name: the segment")
    }

    @Test func deviceInformationIsNotAnEntity() throws {
        let (_, json) = try Self.config([Self.c(0x2A29, .utf8, service: "180a", read: true)])
        #expect(Self.component(json, "180a_2a29") == nil)
        #expect(Self.component(json, "180a_2a29_refresh") == nil)
    }

    @Test func hexSensorsOnlyEnabledWhenTheyMatter() throws {
        var named = Self.c(0xFF10, .hex, service: "ffe0", read: true)
        named.configured = true
        let (_, json) = try Self.config([
            Self.c(0xFF11, .hex, service: "ffe0", read: true), Self.c(0xFF12, .hex, service: "ffe0", notify: true), named,
        ])
        #expect(Self.component(json, "ffe0_ff11")?["enabled_by_default"]?.boolValue == false)
        #expect(Self.component(json, "ffe0_ff12")?["enabled_by_default"] == nil)
        #expect(Self.component(json, "ffe0_ff10")?["enabled_by_default"] == nil)
    }

    @Test func legacyTopics() {
        #expect(HomeAssistantDiscovery.legacyFilter(Self.topics) == "ha/sensor/+/+/config")
        #expect(HomeAssistantDiscovery.isLegacyTopic("ha/sensor/ble_c8123456789a/180f_2a19/config", topics: Self.topics))
        #expect(!HomeAssistantDiscovery.isLegacyTopic("ha/sensor/zigbee_1234/temp/config", topics: Self.topics), "another bridge's")
        #expect(!HomeAssistantDiscovery.isLegacyTopic("ha/device/ble_c8123456789a/config", topics: Self.topics))
        #expect(!HomeAssistantDiscovery.isLegacyTopic("ha/sensor/ble_c8123456789a//config", topics: Self.topics))
        #expect(HomeAssistantDiscovery.statusTopic(Self.topics) == "ha/status")
    }

    @Test func deviceInformationRecording() {
        var info = DeviceInformation()
        let first = info.record(BluetoothUUID(uuid16: 0x2A29), bytes: Array("  Acme\u{0}\u{0}".utf8))
        #expect(first && info.manufacturer == "Acme")
        let again = info.record(BluetoothUUID(uuid16: 0x2A29), bytes: Array("Acme".utf8))
        #expect(!again, "unchanged")
        let battery = info.record(BluetoothUUID(uuid16: 0x2A19), bytes: [0x50])
        #expect(!battery, "not a DIS string")
        let binary = info.record(BluetoothUUID(uuid16: 0x2A24), bytes: [0xFF, 0xFE])
        #expect(!binary, "not UTF-8")
        let software = info.record(BluetoothUUID(uuid16: 0x2A28), bytes: Array("2.0".utf8))
        #expect(software)
        #expect(info.softwareVersion == "2.0")
    }

    @Test func tableKindsForAdvertisementValues() {
        #expect(HomeAssistantSensorKind.named("pressure")?.unit == "hPa")
        #expect(HomeAssistantSensorKind.named("battery")?.entityCategory == "diagnostic")
        #expect(HomeAssistantSensorKind(format: .hex) == nil)
        #expect(HomeAssistantSensorKind(format: .uint16)?.stateClass == "measurement")
    }

    @Test func advertisedValuesBecomeEntities() throws {
        let p = HomeAssistantDiscovery.Peripheral(
            device: "porch", address: "C0:FF:EE:00:00:01", name: "SBHT-003C", characteristics: [],
            advertised: .init(
                decoder: "bthome_v2",
                values: [
                    "temperature": .number(21.5), "temperature_2": .number(20), "battery": .integer(91),
                    "door": .bool(true), "button": .string("press"), "button_2": .string("long_press"),
                    "text": .string("hello"), "raw": .object([:]),
                ]))
        let json = try JSONParser.parse(HomeAssistantDiscovery.deviceConfig(p, bridge: Self.bridge, topics: Self.topics).payload)
        let t = try #require(Self.component(json, "adv_temperature"))
        #expect(t["platform"]?.stringValue == "sensor" && t["device_class"]?.stringValue == "temperature")
        #expect(t["state_topic"]?.stringValue == "ble/porch/advertisement")
        let template = try #require(t["value_template"]?.stringValue)
        #expect(template.contains("value_json.get('values', {})"), "never value_json.values (a dict method in Jinja)")
        #expect(
            template.hasSuffix("{% if 'temperature' in v and v['temperature'] is number %}{{ v['temperature'] }}{% endif %}"),
            "a packet without the value renders nothing, which a numeric sensor ignores: it keeps the state")
        let text = try #require(Self.component(json, "adv_text")?["value_template"]?.stringValue)
        #expect(text.contains("{% elif this.state not in"), "a text sensor would take an empty rendering: it renders its state")
        #expect(Self.component(json, "adv_temperature_2")?["device_class"]?.stringValue == "temperature")
        #expect(Self.component(json, "adv_temperature_2")?["name"]?.stringValue == "Temperature 2")
        #expect(Self.component(json, "adv_battery")?["entity_category"]?.stringValue == "diagnostic")
        let door = try #require(Self.component(json, "adv_door"))
        #expect(door["platform"]?.stringValue == "binary_sensor" && door["device_class"]?.stringValue == "door")
        let button = try #require(Self.component(json, "adv_button_2"))
        #expect(button["platform"]?.stringValue == "event")
        #expect(button["event_types"]?.arrayValue?.contains(.string("long_press")) == true)
        #expect(Self.component(json, "adv_text")?["state_class"] == nil)
        #expect(Self.component(json, "adv_raw") == nil)
        let rssi = try #require(Self.component(json, "rssi"))
        #expect(rssi["state_topic"]?.stringValue == "ble/porch/advertisement", "advertisements carry their RSSI")
        #expect(HomeAssistantEntities.baseName("pm2_5") == "pm2", "only used for a table lookup")
        #expect(HomeAssistantEntities.baseName("button_12") == "button")
        #expect(HomeAssistantEntities.jinjaEscaped(#"it's a\b"#) == #"it\'s a\\b"#)
    }
}
