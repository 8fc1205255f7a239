import Testing

@testable import BridgeCore

/// Home Assistant entities of a device with a profile (design §3): value sensors and binary
/// sensors on `{base}/{device}/values`, buttons and numbers for commands, the cover and the
/// climate, the profile's maker and model on the device.
@Suite struct ProfileEntitiesTests {
    static let topics = TopicMapper(baseTopic: "ble", discoveryPrefix: "ha")
    static let bridge = HomeAssistantDiscovery.Bridge(clientID: "bridge", version: "1.2.3")
    static let notify = BluetoothUUID(uuid16: 0xfe51)

    static func write(_ template: String) -> ProfileStep {
        ProfileStep(.write(characteristic: notify, value: try! ProfileTemplate(template), response: nil))
    }

    /// An eQ-3-like thermostat: a status decode with flags, a clock write, commands.
    static let thermostat = DeviceProfile(
        id: "eq3", manufacturer: "eQ-3", model: "CC-RT-BLE-EQ",
        steps: [
            ProfileStep(.subscribe(characteristic: notify, decode: "status")),
            write("03{now.year2}{now.month}{now.day}{now.hour}{now.minute}{now.second}"),
        ],
        decodes: ["status": .structure(try! ProfileStruct(
            format: "<2xBBxB",
            fields: [.init("_mode"), .init("valve"), .init("target_temperature", .scale(numerator: 1, denominator: 2))],
            bits: [.init(field: "_mode", values: [
                .init("boost", .bits(mask: 0x04, asBool: true)), .init("battery_low", .bits(mask: 0x80, asBool: true)),
            ])]))],
        commands: [
            ProfileCommand(name: "boost_on", steps: [write("4501")]),
            ProfileCommand(name: "set_temperature", steps: [write("41{temperature*2|u8}")]),
            ProfileCommand(name: "set_mode", steps: [write("40{mode|u8}")]),
            ProfileCommand(name: "offset", steps: [write("13{offset*2+7|u8}")]),
            ProfileCommand(
                name: "window", steps: [write("14{temperature*2|u8}{minutes/5|u8}")]),
        ],
        values: ["valve": .init(unit: "%")],
        climate: ProfileClimate(
            temperatureCommand: "set_temperature", temperatureValue: "target_temperature", modeCommand: "set_mode",
            modeValue: "mode", modes: ["auto", "heat", "off", "eco"], minTemperature: 5, maxTemperature: 29.5,
            temperatureStep: 0.5))

    /// An AM43-like blind: position decode, open/close/stop, a position command, a pin option.
    static let blind = DeviceProfile(
        id: "am43", manufacturer: "A-OK", model: "AM43",
        steps: [ProfileStep(.subscribe(characteristic: notify, decode: "settings"))],
        decodes: [
            "settings": .structure(try! ProfileStruct(format: ">5xB", fields: [.init("position")])),
            "battery": .structure(try! ProfileStruct(format: ">7xB", fields: [.init("battery")])),
            "unused": .structure(try! ProfileStruct(format: ">B", fields: [.init("illuminance")])),
        ],
        commands: [
            ProfileCommand(name: "open", steps: [write("00ff00009a0a01dd{xor8|from=4}")]),
            ProfileCommand(name: "close", steps: [write("00ff00009a0a01ee{xor8|from=4}")]),
            ProfileCommand(name: "stop", steps: [write("00ff00009a0a01cc{xor8|from=4}")]),
            ProfileCommand(name: "set_position", steps: [write("00ff0000 9a0d01 {100-position|u8} {xor8|from=4}")]),
            ProfileCommand(
                name: "battery", steps: [write("00ff00009aa20101{xor8|from=4}"), ProfileStep(.read(characteristic: notify, decode: "battery"))]),
            ProfileCommand(
                name: "speed", steps: [write("9a0b{speed|u8}")],
                parameters: ["speed": ProfileParameter(range: 1...100, unit: "%", step: 5)]),
            ProfileCommand(name: "pin", steps: [write("17{code|crc32be}")]),
        ],
        cover: ProfileCover(open: "open", close: "close", stop: "stop", position: "set_position", positionValue: "position"))

    static func config(_ profile: DeviceProfile, information: DeviceInformation = DeviceInformation()) throws -> JSONValue {
        let p = HomeAssistantDiscovery.Peripheral(
            device: "dev", address: "00:1A:22:00:00:01", name: "CC-RT-BLE", information: information, characteristics: [],
            profile: DeviceProfileBinding(profile: profile))
        return try JSONParser.parse(HomeAssistantDiscovery.deviceConfig(p, bridge: bridge, topics: topics).payload)
    }

    static let values = "{% set v = value_json.get('values', {}) if value_json is mapping else {} %}"

    @Test func deviceBlockFromTheProfile() throws {
        let json = try Self.config(Self.thermostat)
        #expect(json["device"]?["manufacturer"] == "eQ-3")
        #expect(json["device"]?["model"] == "CC-RT-BLE-EQ")
        // The Device Information service's strings win.
        let read = try Self.config(Self.thermostat, information: DeviceInformation(manufacturer: "eq-3", model: "CC-RT"))
        #expect(read["device"]?["manufacturer"] == "eq-3")
        #expect(read["device"]?["model"] == "CC-RT")
    }

    @Test func valueSensors() throws {
        let components = try #require(try Self.config(Self.thermostat)["components"])
        let boost = try #require(components["val_boost"])
        #expect(boost["platform"] == "binary_sensor")
        #expect(boost["state_topic"] == "ble/dev/values")
        #expect(boost["unique_id"] == "ble_001a22000001_val_boost")
        #expect(
            boost["value_template"]?.stringValue
                == Self.values + "{% if 'boost' in v %}{{ 'ON' if v['boost'] else 'OFF' }}{% endif %}",
            "without the value: nothing, which HA ignores (this.state would be 'unavailable' while offline)")
        #expect(components["val_battery_low"]?["device_class"] == "battery")
        let valve = try #require(components["val_valve"])
        #expect(valve["platform"] == "sensor")
        #expect(valve["unit_of_measurement"] == "%")  // the profile's values: declaration
        #expect(valve["state_class"] == "measurement")
        #expect(
            valve["value_template"]?.stringValue
                == Self.values + "{% if 'valve' in v and v['valve'] is number %}{{ v['valve'] }}{% endif %}",
            "without the value: nothing, which a numeric sensor ignores")
        // The climate shows the target temperature; `_mode` is not published.
        #expect(components["val_target_temperature"] == nil)
        #expect(components["val__mode"] == nil)
        // AM43: the battery decode of a command is a sensor with the table's class; a decode no step uses is not.
        let blind = try #require(try Self.config(Self.blind)["components"])
        #expect(blind["val_battery"]?["device_class"] == "battery")
        #expect(blind["val_illuminance"] == nil)
        #expect(blind["val_position"] == nil, "the cover shows it")
    }

    @Test func buttons() throws {
        let components = try #require(try Self.config(Self.thermostat)["components"])
        let boost = try #require(components["cmd_boost_on"])
        #expect(boost["platform"] == "button")
        #expect(boost["name"] == "Boost on")
        #expect(boost["command_topic"] == "ble/dev/command/boost_on/set")
        #expect(boost["payload_press"] == "{}")
        let blind = try #require(try Self.config(Self.blind)["components"])
        #expect(blind["cmd_battery"]?["platform"] == "button")
        for claimed in ["open", "close", "stop", "set_position"] { #expect(blind["cmd_\(claimed)"] == nil, "\(claimed)") }
    }

    @Test func numbers() throws {
        let components = try #require(try Self.config(Self.thermostat)["components"])
        let offset = try #require(components["cmd_offset"])
        #expect(offset["platform"] == "number")
        #expect(offset["command_topic"] == "ble/dev/command/offset/set")
        #expect(offset["command_template"] == #"{"offset": {{ value }}}"#)
        // u8 through offset*2+7: -3.5 … 124 in steps of 0.5.
        #expect(offset["min"] == -3.5)
        #expect(offset["max"] == 124.0)
        #expect(offset["step"] == 0.5)
        #expect(offset["state_topic"] == nil, "no value of that name: optimistic")
        // Two parameters: no entity. Claimed by the climate: none either.
        #expect(components["cmd_window"] == nil)
        #expect(components["cmd_set_temperature"] == nil && components["cmd_set_mode"] == nil)
        let blind = try #require(try Self.config(Self.blind)["components"])
        let speed = try #require(blind["cmd_speed"])
        #expect(speed["min"] == 1.0 && speed["max"] == 100.0 && speed["step"] == 5.0)
        #expect(speed["unit_of_measurement"] == "%")
        #expect(blind["cmd_pin"] == nil, "a text parameter is no number")
    }

    @Test func numberRanges() throws {
        let position = ProfileCommand(name: "p", steps: [Self.write("{100-position|u8}")])
        let (range, step) = try #require(HomeAssistantEntities.parameterRange(position, "position"))
        #expect(range == -155...100 && step == 1)
        let half = ProfileCommand(name: "h", steps: [Self.write("{t/2|i8}")])
        let (r2, s2) = try #require(HomeAssistantEntities.parameterRange(half, "t"))
        #expect(r2 == -256...254 && s2 == 2)
        let declared = ProfileCommand(
            name: "d", steps: [Self.write("{t*2|u8}")], parameters: ["t": ProfileParameter(range: 5...29.5)])
        let (r3, s3) = try #require(HomeAssistantEntities.parameterRange(declared, "t"))
        #expect(r3 == 5...29.5 && s3 == 0.5)
    }

    @Test func cover() throws {
        let cover = try #require(try Self.config(Self.blind)["components"]?["cover"])
        #expect(cover["platform"] == "cover")
        #expect(cover["name"] == .null)
        #expect(cover["unique_id"] == "ble_001a22000001_cover")
        #expect(cover["command_topic"] == "ble/dev/command/cover/set")
        #expect(cover["payload_open"] == "open" && cover["payload_close"] == "close" && cover["payload_stop"] == "stop")
        #expect(cover["set_position_topic"] == "ble/dev/command/set_position/set")
        #expect(cover["set_position_template"] == #"{"position": {{ position }}}"#)
        #expect(cover["position_topic"] == "ble/dev/values")
        #expect(
            cover["position_template"]?.stringValue
                == Self.values + "{% if 'position' in v and v['position'] is number %}{{ v['position'] }}{% endif %}")
        // Without stop: its payload is null (Home Assistant shows no stop button).
        var noStop = Self.blind
        noStop.cover?.stop = nil
        let partial = try #require(try Self.config(noStop)["components"])
        #expect(partial["cover"]?["payload_stop"] == .null)
        #expect(partial["cmd_stop"]?["platform"] == "button", "an unclaimed command is a button again")
    }

    @Test func climate() throws {
        let climate = try #require(try Self.config(Self.thermostat)["components"]?["climate"])
        #expect(climate["platform"] == "climate")
        #expect(climate["name"] == .null)
        #expect(climate["temperature_command_topic"] == "ble/dev/command/set_temperature/set")
        #expect(climate["temperature_command_template"] == #"{"temperature": {{ value }}}"#)
        #expect(climate["temperature_state_topic"] == "ble/dev/values")
        #expect(
            climate["temperature_state_template"]?.stringValue
                == Self.values
                + "{% if 'target_temperature' in v and v['target_temperature'] is number %}{{ v['target_temperature'] }}{% endif %}",
            "without the value: nothing, which the climate ignores")
        #expect(climate["modes"] == ["auto", "heat", "off"], "eco is no HVAC mode")
        #expect(climate["mode_command_topic"] == "ble/dev/command/set_mode/set")
        #expect(climate["mode_command_template"] == #"{"mode": "{{ value }}"}"#)
        #expect(climate["mode_state_topic"] == "ble/dev/values")
        #expect(climate["min_temp"] == 5.0 && climate["max_temp"] == 29.5)
        #expect(climate["temp_step"] == 0.5 && climate["precision"] == 0.5)
        #expect(climate["temperature_unit"] == "C")
        #expect(climate["current_temperature_topic"] == nil)
    }

    /// A device without a profile gets none of these.
    @Test func noProfileNoEntities() throws {
        let p = HomeAssistantDiscovery.Peripheral(device: "dev", address: "00:1A:22:00:00:01", name: nil, characteristics: [])
        let json = try JSONParser.parse(HomeAssistantDiscovery.deviceConfig(p, bridge: Self.bridge, topics: Self.topics).payload)
        #expect(json["components"]?.objectValue?.keys.allSatisfy { !$0.hasPrefix("val_") && !$0.hasPrefix("cmd_") } == true)
    }

    /// A profile device's characteristics get entities only when its entry names them (their topics stay).
    @Test func characteristicsOnlyWhenNamed() throws {
        let frames = HomeAssistantDiscovery.Characteristic(
            service: "fe50", characteristic: "fe51", uuid: BluetoothUUID("fe51")!, format: .hex, canNotify: true,
            canRead: false, canWrite: true)
        var named = frames
        named.characteristic = "battery_level"
        named.uuid = BluetoothUUID("2a19")!
        named.format = .batteryLevel
        named.configured = true
        let p = HomeAssistantDiscovery.Peripheral(
            device: "dev", address: "02:4E:A3:C1:00:43", name: "Blind", characteristics: [frames, named],
            profile: DeviceProfileBinding(profile: Self.blind))
        let json = try JSONParser.parse(HomeAssistantDiscovery.deviceConfig(p, bridge: Self.bridge, topics: Self.topics).payload)
        let keys = json["components"]?.objectValue?.keys ?? []
        #expect(!keys.contains { $0.contains("fe51") }, "\(keys)")
        #expect(keys.contains { $0.contains("battery_level") }, "\(keys)")
        // without a profile, the same characteristic has its entity
        let plain = HomeAssistantDiscovery.Peripheral(device: "dev", address: "02:4E:A3:C1:00:43", name: "Blind", characteristics: [frames])
        let plainJSON = try JSONParser.parse(HomeAssistantDiscovery.deviceConfig(plain, bridge: Self.bridge, topics: Self.topics).payload)
        #expect(plainJSON["components"]?.objectValue?.keys.contains { $0.contains("fe51") } == true)
    }
}
