import Testing

@testable import BridgeCore
@testable import ConfigLoader

/// Profile files (SPEC §15) into ``DeviceProfile``s: the model built from YAML, and each refusal
/// with its exact `file:line:column`.
@Suite struct ProfileLoaderTests {
    static func load(_ yaml: String) throws(ConfigError) -> DeviceProfile {
        try ProfileCatalog.parseProfile(yaml: yaml, fileName: "p.yaml")
    }

    static func failure(_ yaml: String) -> ConfigError? {
        do throws(ConfigError) {
            _ = try load(yaml)
            return nil
        } catch {
            return error
        }
    }

    func expectError(
        _ yaml: String, _ expected: String, code: ConfigError.Code = .invalidValue,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = Self.failure(yaml)
        #expect(error?.description == expected, sourceLocation: sourceLocation)
        #expect(error?.code == code, sourceLocation: sourceLocation)
    }

    static let bot = """
        id: bot
        connection: always
        options:
          password: { optional: true }
          retries: { type: integer, optional: true }
        steps:
          - subscribe: { characteristic: "cba20003-224d-11e6-9fb8-0002a5d5c51b" }
        commands:
          press:
            steps:
              - { write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "5711{options.password|crc32be}01" }, if: options.password }
              - { write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570101" }, unless: options.password }
            expect: { notify: "cba20003-224d-11e6-9fb8-0002a5d5c51b", first_byte: { "01": ok, "07": password_required, "09": wrong_password } }
          on: { steps: [ { write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570103" } } ] }
          off: { steps: [ { write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "570104" } } ] }
          position:
            steps: [ { write: { characteristic: "cba20002-224d-11e6-9fb8-0002a5d5c51b", value: "5745{position|u8}" } } ]
            parameters: { position: { min: 0, max: 100, unit: "%" } }

        """

    // MARK: - The model

    @Test func shippedMifloraLoadsAsExpected() throws {
        let catalog = try ProfileCatalog.shipped()
        let profile = try #require(catalog.profiles["xiaomi_miflora"])
        let sensors = try ProfileStruct(
            format: "<hxIBH6x",
            fields: [.init("temperature", .scale(numerator: 1, denominator: 10)), .init("illuminance"), .init("moisture"), .init("conductivity")])
        let info = try ProfileStruct(format: "<B", fields: [.init("battery")])
        let expected = DeviceProfile(
            id: "xiaomi_miflora", manufacturer: "Xiaomi", model: "HHCCJCY01",
            recognize: ProfileRecognize(name: NamePattern("Flower care"), serviceData: [BluetoothUUID("fe95")!]),
            connection: .poll, interval: .seconds(1800),
            steps: [
                ProfileStep(
                    .write(characteristic: BluetoothUUID("1a00")!, value: try ProfileTemplate("a01f"), response: nil), line: 16),
                ProfileStep(.read(characteristic: BluetoothUUID("1a01")!, decode: "sensors"), line: 17),
                ProfileStep(.read(characteristic: BluetoothUUID("1a02")!, decode: "info"), line: 18),
            ],
            decodes: ["sensors": .structure(sensors), "info": .structure(info)],
            commands: [
                ProfileCommand(
                    name: "blink",
                    steps: [ProfileStep(.write(characteristic: BluetoothUUID("1a00")!, value: try ProfileTemplate("fdff"), response: nil), line: 24)])
            ],
            source: .shipped)
        #expect(profile == expected)
        // The simulator's real-time frame (scripts/sim/profiles.yaml): 29.3 °C, 9975 lx, 40 %, 270 µS/cm.
        let values = try profile.decodes["sensors"]!.decode(try Hex.decode("250100f7260000280e01000000000000"))
        #expect(values == ["temperature": .number(29.3), "illuminance": .integer(9975), "moisture": .integer(40), "conductivity": .integer(270)])
    }

    @Test func commandsOptionsAndExpect() throws {
        let profile = try Self.load(Self.bot)
        #expect(profile.commands.map(\.name) == ["press", "on", "off", "position"])
        #expect(profile.options == ["password": .init(kind: .string, optional: true), "retries": .init(kind: .integer, optional: true)])
        let press = try #require(profile.command("press"))
        #expect(press.steps.map(\.condition) == [.ifSet("password"), .unlessSet("password")])
        #expect(press.steps.map(\.line) == [11, 12])
        let expect = try #require(press.expect)
        #expect(expect.characteristic == BluetoothUUID("cba20003-224d-11e6-9fb8-0002a5d5c51b"))
        #expect(try expect.answers.target(for: [0x07]) == "password_required")
        #expect(try expect.answers.target(for: [0x01]) == ProfileExpect.ok)
        #expect(profile.command("position")?.parameters == ["position": ProfileParameter(range: 0...100, unit: "%")])
        #expect(profile.command("position")?.parameterNames == ["position"])
    }

    /// YAML 1.2 `on` and `off` are names, not booleans.
    @Test func onAndOffAreCommandNames() throws {
        let profile = try Self.load(Self.bot)
        #expect(profile.command("on") != nil)
        #expect(profile.command("off") != nil)
        #expect(profile.command("true") == nil)
    }

    /// `${X}` in a profile is text: profiles are not expanded (secrets come through profile_options).
    @Test func variablesAreNotExpanded() throws {
        let profile = try Self.load("id: x\nmanufacturer: \"${HOME}\"\nmodel: ${UNSET_VARIABLE}\n")
        #expect(profile.manufacturer == "${HOME}")
        #expect(profile.model == "${UNSET_VARIABLE}")
    }

    @Test func firstByteDecodesAndMaps() throws {
        let profile = try Self.load("""
            id: x
            values: { radon: { unit: "Bq/m³" }, mode: {} }
            decode:
              status: { first_byte: { "01": a, "0x02": b } }
              a: { struct: "<xB", fields: { mode: { 0: "off", 1: "on", 0x02: boost } } }
              b: { struct: "<xH", fields: { radon: "" } }

            """)
        #expect(profile.values == ["radon": ProfileValueInfo(unit: "Bq/m³"), "mode": ProfileValueInfo()])
        let status = try #require(profile.decodes["status"])
        #expect(try status.decode([0x01, 0x02]) == ["mode": .string("boost")])
        #expect(try status.decode([0x02, 0x10, 0x00]) == ["radon": .integer(16)])
    }

    @Test func coverAndClimate() throws {
        let profile = try Self.load("""
            id: blind
            values: { position: {}, target_temperature: { unit: "°C", device_class: temperature } }
            decode:
              status: { struct: "<xBh", fields: { position: "", target_temperature: "/2" } }
            steps:
              - subscribe: { characteristic: "fe51", decode: status }
            commands:
              open: { steps: [ { write: { characteristic: "fe50", value: "9a0a01dd" } } ] }
              set_position: { steps: [ { write: { characteristic: "fe50", value: "9a0d01{position|u8}" } } ] }
              set_temperature: { steps: [ { write: { characteristic: "fe50", value: "41{temperature|u8}" } } ] }
            cover: { open: open, position: set_position, position_value: position }
            climate: { temperature_command: set_temperature, temperature_value: target_temperature, modes: [auto, manual], min_temp: 4.5, max_temp: 29.5 }

            """)
        #expect(profile.cover == ProfileCover(open: "open", position: "set_position", positionValue: "position"))
        #expect(
            profile.climate
                == ProfileClimate(
                    temperatureCommand: "set_temperature", temperatureValue: "target_temperature", modes: ["auto", "manual"],
                    minTemperature: 4.5, maxTemperature: 29.5, temperatureStep: 0.5))
        #expect(profile.values["target_temperature"] == ProfileValueInfo(unit: "°C", deviceClass: "temperature"))
        expectError(
            Self.bot + "climate: { temperature_command: position }\n",
            "p.yaml:19:33: 'climate.temperature_command': command 'position' must take the parameter 'temperature' in a template such as {temperature|u8} (it takes position)")
        expectError(
            Self.bot + "cover: { position: press }\n",
            "p.yaml:19:20: 'cover.position': command 'press' must take the parameter 'position' in a template such as {position|u8} (it takes none)")
    }

    // MARK: - Refusals, each at its node

    @Test func unknownKeyHasASuggestion() {
        expectError("id: x\nmodle: y\n", "p.yaml:2:1: unknown key 'modle' at the top level (did you mean 'model'?)", code: .unknownKey)
        expectError(
            "id: x\nsteps:\n  - read: { characteristic: \"1a01\", decod: d }\n",
            "p.yaml:3:37: unknown key 'decod' in 'steps[0].read' (did you mean 'decode'?)", code: .unknownKey)
    }

    /// A struct's format error points at the character inside the double-quoted string.
    @Test func structErrorInsideTheQuotedString() {
        // "<hxIBz": the quote is at column 16, 'z' the string's 6th character.
        expectError(
            "id: x\ndecode:\n  d: { struct: \"<hxIBz\", fields: {} }\n",
            "p.yaml:3:22: decode.d.struct: unknown format code 'z' (supported: x b B h H i I l L q Q e f d ? s)")
    }

    @Test func transformErrorInsideAPlainScalar() {
        // Plain `/1x` at column 45: 'x' is its third character.
        expectError(
            "id: x\ndecode:\n  d: { struct: \"<h\", fields: { temperature: /1x } }\n",
            "p.yaml:3:47: decode.d.fields.temperature: 'x' in a scale: write a decimal number such as /10 or /0.01")
    }

    @Test func templateErrorInsideASingleQuotedString() {
        // '57zz' opens at column 45; 'z' is its third character.
        expectError(
            "id: x\nsteps:\n  - write: { characteristic: \"1a00\", value: '57zz' }\n",
            "p.yaml:3:48: steps[0].write.value: 'z' is neither a hex digit nor a placeholder such as {position|u8}")
    }

    @Test func fieldCountAtTheStruct() {
        expectError(
            "id: x\ndecode:\n  d: { struct: \"<hB\", fields: { temperature: \"\" } }\n",
            "p.yaml:3:16: decode.d.struct: struct \"<hB\" has 2 values (codes other than 'x') but 1 field is named: name one field per value, in order")
    }

    @Test func unknownValueName() {
        expectError(
            "id: x\ndecode:\n  d: { struct: \"<h\", fields: { temprature: \"/10\" } }\n",
            "p.yaml:3:32: unknown value name 'temprature' in 'decode.d.fields' (did you mean 'temperature'?; declare it under 'values:'; or start it with '_' to decode it without publishing it)")
    }

    @Test func knownValueNamesTakeANumericSuffix() throws {
        let profile = try Self.load("id: x\ndecode:\n  d: { struct: \"<hh\", fields: { temperature_probe_1: \"\", temperature_probe_2: \"\" } }\n")
        #expect(profile.decodes["d"]?.valueNames == ["temperature_probe_1", "temperature_probe_2"])
        #expect(ValueNames.isKnown("humidity_3"))
        #expect(!ValueNames.isKnown("radon"))
    }

    @Test func stepDecodeMustExist() {
        expectError(
            "id: x\ndecode:\n  sensors: { struct: \"<B\", fields: { battery: \"\" } }\nsteps:\n  - read: { characteristic: \"1a01\", decode: sensor }\n",
            "p.yaml:5:45: unknown decode 'sensor' in 'steps[0].read.decode' (did you mean 'sensors'?)")
    }

    @Test func firstByteTargetsMustBeStructDecodes() {
        expectError(
            "id: x\ndecode:\n  d: { first_byte: { \"01\": nothing } }\n",
            "p.yaml:3:28: unknown decode 'nothing' in 'decode.d.first_byte.01' (none declared; a first_byte names struct decodes)")
        expectError(
            "id: x\ndecode:\n  d: { first_byte: { \"01\": e } }\n  e: { first_byte: { \"02\": d } }\n",
            "p.yaml:3:28: 'decode.d.first_byte.01': 'e' is a first_byte decode; a first_byte names struct decodes")
    }

    /// A first_byte key's error is inside the key: `"0g"` at column 22, 'g' its second character.
    @Test func firstByteKeyErrorInsideTheKey() {
        expectError(
            "id: x\ndecode:\n  e: { struct: \"<B\", fields: { battery: \"\" } }\n  d: { first_byte: { \"0g\": e } }\n",
            "p.yaml:4:24: decode.d.first_byte.0g: 'g' is not a hex digit")
    }

    @Test func templateOptionsMustBeDeclared() {
        // `{` of the placeholder is the 5th character of the string opening at column 45.
        expectError(
            "id: x\noptions: { password: {} }\nsteps:\n  - write: { characteristic: \"fff2\", value: \"5711{options.pasword|crc32be}\" }\n",
            "p.yaml:4:50: steps[0].write.value: option 'pasword' is not declared (did you mean 'password'?)")
    }

    @Test func optionalOptionsNeedAnIf() {
        expectError(
            "id: x\noptions: { password: { optional: true } }\nsteps:\n  - write: { characteristic: \"fff2\", value: \"5711{options.password|crc32be}\" }\n",
            "p.yaml:4:50: steps[0].write.value: option 'password' is optional: give this step 'if: options.password'")
    }

    @Test func connectionStepsTakeNoParameters() {
        expectError(
            "id: x\nsteps:\n  - write: { characteristic: \"fff2\", value: \"57{position|u8}\" }\n",
            "p.yaml:3:48: steps[0].write.value: 'position' is a command parameter, and connection steps have none (options are {options.NAME})")
    }

    @Test func conditionsNameDeclaredOptions() {
        expectError(
            "id: x\noptions: { password: {} }\nsteps:\n  - { sleep: 1s, if: options.passwd }\n",
            "p.yaml:4:22: unknown option 'passwd' in 'steps[0].if' (did you mean 'password'?)")
        expectError(
            "id: x\nsteps:\n  - { sleep: 1s, unless: password }\n",
            "p.yaml:3:26: 'steps[0].unless' must be options.NAME (an option the profile declares), not 'password'")
    }

    @Test func waitNotifyNeedsAnEarlierSubscribe() {
        expectError(
            "id: x\nsteps:\n  - wait_notify: { characteristic: \"ebe0ccc1-7a0a-4b0c-8a1a-6ff2997da3a6\", timeout: 30s }\n  - subscribe: { characteristic: \"ebe0ccc1-7a0a-4b0c-8a1a-6ff2997da3a6\" }\n",
            "p.yaml:3:36: 'steps[0].wait_notify.characteristic': characteristic ebe0ccc1-7a0a-4b0c-8a1a-6ff2997da3a6 is not subscribed: add a 'subscribe' step for it before this one")
    }

    @Test func expectNeedsASubscribe() throws {
        expectError(
            "id: x\ncommands:\n  press:\n    steps: [ { write: { characteristic: \"fff2\", value: \"01\" } } ]\n    expect: { notify: \"fff3\", first_byte: { \"01\": ok } }\n",
            "p.yaml:5:23: 'commands.press.expect.notify': characteristic fff3 is not subscribed: add a 'subscribe' step for it before this one")
        // The command's own subscribe counts.
        _ = try Self.load(
            "id: x\ncommands:\n  press:\n    steps: [ { subscribe: { characteristic: \"fff3\" } }, { write: { characteristic: \"fff2\", value: \"01\" } } ]\n    expect: { notify: \"fff3\", first_byte: { \"01\": ok } }\n")
    }

    @Test func coverAndClimateNamesMustExist() {
        expectError(
            Self.bot + "cover: { open: opn }\n",
            "p.yaml:19:16: unknown command 'opn' in 'cover.open' (did you mean 'on'?)")
        expectError(
            Self.bot + "cover: { position_value: target }\n",
            "p.yaml:19:26: unknown value 'target' in 'cover.position_value' (none declared; a decode must name it)")
    }

    @Test func namesMustBeTopicSegments() {
        expectError(
            "id: x\ncommands:\n  \"a/b\": { steps: [] }\n",
            "p.yaml:3:3: invalid command name 'a/b' in 'commands.a/b': a topic segment must not contain '/', '+' or '#'", code: .invalidName)
        expectError(
            "id: x\noptions:\n  \"pass+word\": {}\n",
            "p.yaml:3:3: invalid option name 'pass+word' in 'options.pass+word': a topic segment must not contain '/', '+' or '#'", code: .invalidName)
    }

    @Test func pollNeedsAnInterval() {
        expectError("id: x\nconnection: poll\n", "p.yaml:2:1: 'connection: poll' needs 'interval' (e.g. interval: 30m)", code: .missingKey)
        expectError(
            "id: x\ninterval: 5m\n", "p.yaml:2:1: 'interval' needs 'connection: poll' (this profile is 'always')", code: .ignoredSetting)
    }

    @Test func parametersMustBeUsed() {
        expectError(
            "id: x\ncommands:\n  c:\n    steps: [ { write: { characteristic: \"fff2\", value: \"{pos|u8}\" } } ]\n    parameters: { position: { min: 0, max: 100 } }\n",
            "p.yaml:5:19: parameter 'position' is not used by the command's templates (they use: pos)")
    }

    @Test func aStepDoesOneThing() {
        expectError(
            "id: x\nsteps:\n  - { sleep: 1s, read: { characteristic: \"fff1\" } }\n",
            "p.yaml:3:5: a step does one thing: 'steps[0]' has read and sleep")
    }
}
