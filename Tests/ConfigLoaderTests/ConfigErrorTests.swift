import ConfigLoader
import Testing

@testable import BridgeCore

/// Each kind of invalid configuration, with the exact `file:line:column: message` checked.
@Suite struct ConfigErrorTests {
    func failure(_ yaml: String, environment: [String: String] = [:]) -> ConfigError? {
        do {
            _ = try BridgeConfig.parse(yaml: yaml, fileName: "bridge.yaml", environment: environment, hostName: "h")
            return nil
        } catch {
            return error
        }
    }

    func expectError(
        _ yaml: String, _ expected: String, code: ConfigError.Code, environment: [String: String] = [:],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = failure(yaml, environment: environment)
        #expect(error?.description == expected, sourceLocation: sourceLocation)
        #expect(error?.code == code, sourceLocation: sourceLocation)
    }

    static let head = "mqtt:\n  url: mqtt://localhost\n"

    @Test func yamlSyntax() {
        let error = failure("mqtt:\n  url: mqtt://localhost\n\tbase_topic: x\n")
        #expect(error?.code == .yamlSyntax)
        #expect(
            error?.description
                == "bridge.yaml:3:1: invalid YAML: found a tab character that violates indentation (while scanning a plain scalar at line 2, column 8)"
        )
        let unclosed = failure("mqtt: {url: mqtt://x\n")
        #expect(unclosed?.code == .yamlSyntax)
        #expect(unclosed?.line == 2)
    }

    @Test func unknownKeyWithSuggestion() {
        expectError(
            Self.head + "  bas_topic: x\n",
            "bridge.yaml:3:3: unknown key 'bas_topic' in 'mqtt' (did you mean 'base_topic'?)", code: .unknownKey)
        expectError(
            Self.head + "devices:\n  - match: { adress: \"C8:12:34:56:78:9A\" }\n",
            "bridge.yaml:4:14: unknown key 'adress' in 'devices[0].match' (did you mean 'address'?)", code: .unknownKey)
        expectError(
            Self.head + "bluetoth: {}\n",
            "bridge.yaml:3:1: unknown key 'bluetoth' at the top level (did you mean 'bluetooth'?)", code: .unknownKey)
        expectError(
            Self.head + "zzz: 1\n",
            "bridge.yaml:3:1: unknown key 'zzz' at the top level (known keys: mqtt, bluetooth, state_file, homeassistant, commands, reconnect, health, log_level, devices, bridge, cluster, trackers, profiles_dir, management, devices_file, web)",
            code: .unknownKey)
    }

    @Test func duplicateKey() {
        expectError(
            Self.head + "  url: mqtt://other\n", "bridge.yaml:3:3: duplicate key 'mqtt.url' (first at line 2)",
            code: .duplicateKey)
    }

    @Test func wrongType() {
        expectError(
            "mqtt:\n  url: [a, b]\n", "bridge.yaml:2:8: expected a string for 'mqtt.url', found a list", code: .wrongType)
        expectError("mqtt: mqtt://x\n", "bridge.yaml:1:7: expected a mapping for 'mqtt', found 'mqtt://x'", code: .wrongType)
        expectError(
            Self.head + "bluetooth:\n  services: 180d\n",
            "bridge.yaml:4:13: expected a list for 'bluetooth.services', found '180d'", code: .wrongType)
        expectError(
            Self.head + "commands:\n  queue: many\n",
            "bridge.yaml:4:10: expected an integer for 'commands.queue', found 'many'", code: .wrongType)
        expectError(
            Self.head + "homeassistant:\n  discovery: maybe\n",
            "bridge.yaml:4:14: expected a boolean (true or false) for 'homeassistant.discovery', found 'maybe'",
            code: .wrongType)
        expectError("- a\n- b\n", "bridge.yaml:1:1: expected a mapping for '', found a list", code: .wrongType)
    }

    @Test func badDuration() {
        expectError(
            Self.head + "commands:\n  timeout: 10\n",
            "bridge.yaml:4:12: a duration needs a unit: write 10s (or 10ms, 10m, 10h) for 'commands.timeout'",
            code: .invalidDuration)
        expectError(
            Self.head + "reconnect:\n  initial_delay: 5 minutes\n",
            "bridge.yaml:4:18: unknown unit ' minutes' in duration '5 minutes' (use ms, s, m or h) for 'reconnect.initial_delay'",
            code: .invalidDuration)
        expectError(
            Self.head + "commands:\n  timeout: 0s\n", "bridge.yaml:4:12: 'commands.timeout' must be greater than zero",
            code: .invalidDuration)
        expectError(
            "mqtt:\n  url: mqtt://h\n  keepalive: 1s\n", "bridge.yaml:3:14: 'mqtt.keepalive' must be at least 5s",
            code: .invalidDuration)
    }

    @Test func badUUID() {
        expectError(
            Self.head + "bluetooth:\n  services: [\"180d\", \"18x0\"]\n",
            "bridge.yaml:4:22: invalid Bluetooth UUID '18x0' for 'bluetooth.services[1]' (expected 16-bit like 180d, 32-bit, or 128-bit like 0000180d-0000-1000-8000-00805f9b34fb)",
            code: .invalidUUID)
    }

    @Test func badAddress() {
        expectError(
            Self.head + "devices:\n  - match: { address: \"C8:12:34\" }\n",
            "bridge.yaml:4:23: invalid Bluetooth address 'C8:12:34' (expected AA:BB:CC:DD:EE:FF)", code: .invalidAddress)
    }

    @Test func badURL() {
        expectError(
            "mqtt:\n  url: http://localhost:1883\n",
            "bridge.yaml:2:8: unsupported URL scheme 'http' in 'http://localhost:1883' (use mqtt:// or mqtts:// for TLS)",
            code: .invalidURL)
        expectError(
            "mqtt:\n  url: mqtt://localhost:99999\n",
            "bridge.yaml:2:8: invalid port '99999' in broker URL 'mqtt://localhost:99999' (expected 1-65535)",
            code: .invalidURL)
        expectError(
            "mqtt:\n  url: localhost\n",
            "bridge.yaml:2:8: invalid broker URL 'localhost' (expected mqtt://host:port or mqtts://host:port)",
            code: .invalidURL)
    }

    @Test func missingURL() {
        expectError("", "bridge.yaml:1:1: missing required key 'mqtt.url'", code: .missingKey)
        expectError("bluetooth: {}\n", "bridge.yaml:1:1: missing required key 'mqtt.url'", code: .missingKey)
        expectError(
            "bluetooth: {}\nmqtt:\n  base_topic: x\n", "bridge.yaml:2:1: missing required key 'url' in 'mqtt'",
            code: .missingKey)
    }

    @Test func badFormat() {
        expectError(
            Self.head + "devices:\n  - match: { name: x }\n    characteristics:\n      - { uuid: 2a19, format: batery_level }\n",
            "bridge.yaml:6:31: unknown format 'batery_level' (did you mean 'battery_level'?)", code: .invalidFormat)
    }

    @Test func formatSuggestionByPrefix() {
        expectError(
            Self.head + "devices:\n  - match: { name: x }\n    characteristics:\n      - { uuid: 2a37, format: heart_rate }\n",
            "bridge.yaml:6:31: unknown format 'heart_rate' (did you mean 'heart_rate_measurement'?)", code: .invalidFormat)
        expectError(
            Self.head + "devices:\n  - match: { name: x }\n    characteristics:\n      - { uuid: 2a37, format: bcd }\n",
            "bridge.yaml:6:31: unknown format 'bcd' (known formats: hex, utf8, uint8, uint16, uint32, sint8, sint16, sint32, float32, float64, sfloat, float, heart_rate_measurement, battery_level, temperature, humidity, body_sensor_location)",
            code: .invalidFormat)
    }

    @Test func badWriteTypes() {
        let prefix = Self.head + "devices:\n  - match: { name: x }\n    characteristics:\n"
        expectError(
            prefix + "      - { uuid: 2a39, write_types: [request, comand] }\n",
            "bridge.yaml:6:46: unknown write type 'comand' in 'devices[0].characteristics[0].write_types' (known: request, command); did you mean 'command'?",
            code: .invalidValue)
        expectError(
            prefix + "      - { uuid: 2a39, write_types: [] }\n",
            "bridge.yaml:6:36: 'devices[0].characteristics[0].write_types' must list at least one of request, command",
            code: .invalidValue)
        expectError(
            prefix + "      - { uuid: 2a39, write_types: { a: 1 } }\n",
            "bridge.yaml:6:36: expected a list for 'devices[0].characteristics[0].write_types', found a mapping",
            code: .wrongType)
    }

    @Test func badHomeAssistantControls() {
        let prefix = Self.head + "devices:\n  - match: { name: x }\n    characteristics:\n"
        expectError(
            prefix + "      - { uuid: ff01, press: xyz }\n",
            "bridge.yaml:6:30: 'devices[0].characteristics[0].press' must be the hex bytes the button writes, e.g. \"01\", not 'xyz'",
            code: .invalidValue)
        expectError(
            prefix + "      - { uuid: ff01, min: 1 }\n",
            "bridge.yaml:6:28: 'devices[0].characteristics[0].min' needs both 'min' and 'max'", code: .invalidValue)
        expectError(
            prefix + "      - { uuid: ff01, min: 5, max: 1 }\n",
            "bridge.yaml:6:28: 'devices[0].characteristics[0].min' must be below 'devices[0].characteristics[0].max'",
            code: .invalidValue)
        expectError(
            prefix + "      - { uuid: ff01, min: low, max: 1 }\n",
            "bridge.yaml:6:28: expected a number for 'devices[0].characteristics[0].min', found 'low'", code: .wrongType)
    }

    @Test func multipleDocuments() {
        expectError(
            Self.head + "---\nfoo: 1\n",
            "bridge.yaml:3:1: invalid YAML: the file must hold a single document (found a second one)", code: .yamlSyntax)
    }

    @Test func undefinedAlias() {
        expectError(Self.head + "bluetooth: *nope\n", "bridge.yaml:3:12: invalid YAML: found undefined alias", code: .yamlSyntax)
    }

    @Test func duplicateDeviceNames() {
        let yaml = Self.head + """
            devices:
              - match: { address: "C8:12:34:56:78:9A" }
                name: strap
              - match: { name: "Polar*" }
                name: strap
            """
        expectError(yaml, "bridge.yaml:7:11: duplicate device name 'strap' (first used at line 5)", code: .duplicateName)
        let sameAddress = Self.head + """
            devices:
              - match: { address: "C8:12:34:56:78:9A" }
              - match: { address: "c8:12:34:56:78:9a" }
            """
        expectError(
            sameAddress, "bridge.yaml:5:12: device C8:12:34:56:78:9A is already configured at line 4", code: .duplicateName)
    }

    @Test func invalidNames() {
        expectError(
            Self.head + "devices:\n  - match: { name: x }\n    name: a/b\n",
            "bridge.yaml:5:11: invalid name 'a/b' for 'devices[0].name': a topic segment must not contain '/', '+' or '#'",
            code: .invalidName)
        expectError(
            Self.head + "devices:\n  - match: { name: x }\n    name: bridge\n",
            "bridge.yaml:5:11: invalid name 'bridge' for 'devices[0].name': 'bridge' is reserved for the bridge's own topics",
            code: .invalidName)
        expectError(
            Self.head + "devices:\n  - match: { name: x }\n    characteristics: [{ uuid: 2a37, name: \"hr#\" }]\n",
            "bridge.yaml:5:43: invalid name 'hr#' for 'devices[0].characteristics[0].name': a topic segment must not contain '/', '+' or '#'",
            code: .invalidName)
        expectError(
            "mqtt:\n  url: mqtt://h\n  base_topic: ble/+\n",
            "bridge.yaml:3:15: invalid topic 'ble/+' for 'mqtt.base_topic': a topic must not contain '/', '+' or '#'",
            code: .invalidValue)
        expectError(
            "mqtt:\n  url: mqtt://h\n  base_topic: /ble\n",
            "bridge.yaml:3:15: invalid topic '/ble' for 'mqtt.base_topic': a topic must not have empty levels (leading, trailing or double '/')",
            code: .invalidValue)
    }

    @Test func undefinedVariable() {
        expectError(
            "mqtt:\n  url: mqtt://h\n  client_id: bridge-${NOPE}\n",
            "bridge.yaml:3:21: environment variable 'NOPE' is not set (use ${NOPE:-default} for a default)",
            code: .undefinedVariable)
        expectError(
            "mqtt:\n  url: mqtt://h\n  password: \"${SECRET}\"\n",
            "bridge.yaml:3:13: environment variable 'SECRET' is not set (use ${SECRET:-default} for a default)",
            code: .undefinedVariable)
        expectError(
            "mqtt:\n  url: mqtt://h\n  username: ${USER\n", "bridge.yaml:3:13: unterminated '${' (expected '}')",
            code: .invalidValue)
    }

    @Test func otherInvalidValues() {
        expectError(
            Self.head + "log_level: loud\n",
            "bridge.yaml:3:12: unknown log level 'loud' (use trace, debug, info, notice, warning, error or critical)",
            code: .invalidValue)
        expectError(
            Self.head + "reconnect: { initial_delay: 10s, max_delay: 5s }\n",
            "bridge.yaml:3:45: 'reconnect.max_delay' (5s) must not be less than 'reconnect.initial_delay' (10s)",
            code: .invalidValue)
        expectError(
            "mqtt:\n  url: mqtt://h\n  protocol: 4\n", "bridge.yaml:3:13: unsupported MQTT protocol '4' (use 5 or 3.1.1)",
            code: .invalidValue)
        expectError(
            Self.head + "commands: { queue: 0 }\n",
            "bridge.yaml:3:20: 'commands.queue' must be between 1 and 100000, not 0", code: .invalidValue)
        expectError(
            Self.head + "devices:\n  - match: { address: \"C8:12:34:56:78:9A\", name: x }\n",
            "bridge.yaml:4:12: 'devices[0].match' takes either 'address' or 'name', not both", code: .invalidValue)
        expectError(
            Self.head + "devices:\n  - name: x\n", "bridge.yaml:4:5: missing required key 'match' in 'devices[0]'",
            code: .missingKey)
        expectError(
            "mqtt:\n  url: mqtts://h\n  tls: { cert_file: c.pem }\n",
            "bridge.yaml:3:10: 'mqtt.tls.cert_file' needs 'mqtt.tls.key_file'", code: .missingKey)
        expectError(
            Self.head + "bluetooth: { adapter: \"hci 0\" }\n",
            "bridge.yaml:3:23: invalid adapter 'hci 0' (expected a name like hci0 or a path like /org/bluez/hci0)",
            code: .invalidValue)
    }
}
