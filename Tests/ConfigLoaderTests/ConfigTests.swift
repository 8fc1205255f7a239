import ConfigLoader
import Foundation
import Logging
import Testing

@testable import BridgeCore

@Suite struct ConfigTests {
    static let specExample = """
        mqtt:
          url: mqtt://127.0.0.1:1883      # mqtts:// for TLS
          base_topic: ble                 # default "ble"
          client_id: ble-mqtt-bridge      # default ble-mqtt-bridge-<hostname>
          username: bridge
          password: ${MQTT_PASSWORD}
          tls: { ca_file: ca.pem, cert_file: c.pem, key_file: c.key }
        bluetooth:
          adapter: hci0                   # default hci0
          services: ["180d", "181a"]      # scan filter: service UUIDs, 16/32/128-bit
        state_file: /var/lib/ble-mqtt-bridge/peripherals.json
        homeassistant: { discovery: true, prefix: homeassistant }
        devices:                          # optional; per-device settings
          - match: { address: "C8:12:34:56:78:9A" }   # or { name: "Polar H10*" }
            name: chest_strap             # topic segment instead of the address
            characteristics:
              - uuid: "2a37"
                name: heart_rate          # topic segment instead of the UUID
                format: heart_rate_measurement
              - uuid: "2a19"
                poll: 5m                  # read periodically

        """

    func parse(_ yaml: String, environment: [String: String] = [:]) throws -> BridgeConfig {
        try BridgeConfig.parse(yaml: yaml, fileName: "bridge.yaml", environment: environment, hostName: "pi")
    }

    @Test func parsesSpecExample() throws {
        let config = try parse(Self.specExample, environment: ["MQTT_PASSWORD": "s3cret"])
        #expect(config.mqtt.url == BrokerURL(scheme: .mqtt, host: "127.0.0.1", port: 1883))
        #expect(config.mqtt.baseTopic == "ble")
        #expect(config.mqtt.clientID == "ble-mqtt-bridge")
        #expect(config.mqtt.username == "bridge")
        #expect(config.mqtt.password == "s3cret")
        #expect(config.mqtt.tls == TLSSettings(caFile: "ca.pem", certFile: "c.pem", keyFile: "c.key"))
        #expect(config.mqtt.protocolVersion == .v5)
        #expect(config.mqtt.keepAlive == .seconds(60))
        #expect(config.bluetooth.adapter == "hci0")
        #expect(config.bluetooth.adapterPath == "/org/bluez/hci0")
        #expect(config.bluetooth.services == [BluetoothUUID(uuid16: 0x180D), BluetoothUUID(uuid16: 0x181A)])
        #expect(config.bluetooth.scanWatchdog == .seconds(60))
        #expect(config.stateFile == "/var/lib/ble-mqtt-bridge/peripherals.json")
        #expect(config.homeAssistant == BridgeConfig.HomeAssistant(discovery: true, prefix: "homeassistant"))
        #expect(config.commands == BridgeConfig.Commands(timeout: .seconds(10), queue: 1024))
        #expect(config.reconnect == BridgeConfig.Reconnect(initialDelay: .seconds(1), maxDelay: .seconds(60)))
        #expect(config.logLevel == nil)
        let expectedDevice = BridgeConfig.Device(
            match: .address(BluetoothAddress("C8:12:34:56:78:9A")!),
            name: "chest_strap",
            characteristics: [
                .init(uuid: BluetoothUUID(uuid16: 0x2A37), name: "heart_rate", format: .heartRateMeasurement),
                .init(uuid: BluetoothUUID(uuid16: 0x2A19), poll: .seconds(300)),
            ])
        #expect(config.devices == [expectedDevice])
        #expect(config.devices[0].characteristics[1].effectiveFormat == .batteryLevel)
        // The example's tls block has no effect with mqtt://; that is a warning, not an error.
        #expect(config.warnings.map(\.description) == [
            "bridge.yaml:7:3: 'mqtt.tls' has no effect with an mqtt:// URL (use mqtts:// for TLS)"
        ])
    }

    @Test func appliesDefaults() throws {
        let config = try parse("mqtt:\n  url: mqtts://broker.example.com\n")
        #expect(config.mqtt.url == BrokerURL(scheme: .mqtts, host: "broker.example.com", port: 8883))
        #expect(config.mqtt.baseTopic == "ble")
        #expect(config.mqtt.clientID == "ble-mqtt-bridge-pi")
        #expect(config.mqtt.username == nil)
        #expect(config.mqtt.password == nil)
        #expect(config.mqtt.tls == nil)
        #expect(config.bluetooth == BridgeConfig.Bluetooth())
        #expect(config.bluetooth.adapter == "hci0")
        #expect(config.stateFile == nil)
        #expect(config.homeAssistant == BridgeConfig.HomeAssistant(discovery: false, prefix: "homeassistant"))
        #expect(config.commands.timeout == .seconds(10))
        #expect(config.commands.queue == 1024)
        #expect(config.reconnect.initialDelay == .seconds(1))
        #expect(config.reconnect.maxDelay == .seconds(60))
        #expect(config.devices.isEmpty)
        #expect(config.warnings.isEmpty)
    }

    @Test func parsesEveryKey() throws {
        let yaml = """
            mqtt:
              url: "mqtts://[::1]:8884/"
              base_topic: home/ble
              client_id: my-bridge
              username: u
              password: p
              tls:
                ca_file: /etc/ca.pem
              protocol: 3.1.1
              keepalive: 30s
            bluetooth:
              adapter: /org/bluez/hci1
              services:
                - 0x180D
                - 6E400001-B5A3-F393-E0A9-E50E24DCCA9E
                - 180d
              scan_watchdog: 2m
            state_file: state.json
            homeassistant:
              discovery: yes
              prefix: ha
            commands: { timeout: 1m30s, queue: 8 }
            reconnect: { initial_delay: 500ms, max_delay: 5m }
            log_level: debug
            devices:
              - match: { name: "Polar H10*" }
                services:
                  - { uuid: 180d, name: heart }
                characteristics:
                  - { uuid: 2a37, format: heart_rate_measurement, poll: 1h }
                  - { uuid: 2a39, write_types: [request, command] }
                  - { uuid: 2a3a, write_types: command }
                  - { uuid: ff01, press: "AA01", min: -5, max: 7.5 }
              - match: { address: "aa:bb:cc:dd:ee:ff" }
            """
        let config = try parse(yaml)
        #expect(config.mqtt.url == BrokerURL(scheme: .mqtts, host: "::1", port: 8884))
        #expect(config.mqtt.baseTopic == "home/ble")
        #expect(config.mqtt.clientID == "my-bridge")
        #expect(config.mqtt.tls == TLSSettings(caFile: "/etc/ca.pem"))
        #expect(config.mqtt.protocolVersion == .v311)
        #expect(config.mqtt.keepAlive == .seconds(30))
        #expect(config.bluetooth.adapter == "hci1")
        #expect(config.bluetooth.services.map(\.shortForm) == ["180d", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"])
        #expect(config.bluetooth.scanWatchdog == .seconds(120))
        #expect(config.stateFile == "state.json")
        #expect(config.homeAssistant == BridgeConfig.HomeAssistant(discovery: true, prefix: "ha"))
        let control = config.devices.first?.characteristics.last
        #expect(control?.press == [0xAA, 0x01] && control?.range == -5...7.5)
        #expect(config.commands == BridgeConfig.Commands(timeout: .seconds(90), queue: 8))
        #expect(config.reconnect == BridgeConfig.Reconnect(initialDelay: .milliseconds(500), maxDelay: .seconds(300)))
        #expect(config.logLevel == .debug)
        #expect(config.devices.count == 2)
        #expect(config.devices[0].match == .name(NamePattern("Polar H10*")))
        #expect(config.devices[0].name == nil)
        #expect(config.devices[0].services == [.init(uuid: BluetoothUUID(uuid16: 0x180D), name: "heart")])
        #expect(config.devices[0].characteristics[0].poll == .seconds(3600))
        #expect(config.devices[0].characteristics[0].writeTypes == nil)
        #expect(config.devices[0].characteristics[1].writeTypes == [.request, .command])
        #expect(config.devices[0].characteristics[2].writeTypes == [.command])
        #expect(config.devices[1].match == .address(BluetoothAddress("AA:BB:CC:DD:EE:FF")!))
        let polar = config.device(address: BluetoothAddress("11:22:33:44:55:66")!, name: "Polar H10 ABC")
        #expect(polar == config.devices[0])
        #expect(config.device(address: BluetoothAddress("AA:BB:CC:DD:EE:FF")!, name: "Polar H10 X") == config.devices[1])
        #expect(config.device(address: BluetoothAddress("11:22:33:44:55:66")!, name: "Other") == nil)
    }

    @Test func nullValuesMeanDefaults() throws {
        let config = try parse("mqtt:\n  url: mqtt://h\n  username:\n  base_topic: ~\nbluetooth:\ndevices:\n")
        #expect(config.mqtt.username == nil)
        #expect(config.mqtt.baseTopic == "ble")
        #expect(config.bluetooth == BridgeConfig.Bluetooth())
        #expect(config.devices.isEmpty)
    }

    @Test func expandsEnvironmentEverywhere() throws {
        let yaml = """
            mqtt:
              url: mqtt://${HOST}:${PORT:-1883}
              base_topic: ${BASE-ble}
              password: "${PASS}"
              username: ${USER:-nobody}
            bluetooth:
              services: ["${SERVICE}"]
            commands:
              queue: ${QUEUE}
              timeout: ${TIMEOUT:-3s}
            homeassistant:
              discovery: ${HA}
            """
        let environment = ["HOST": "broker", "PASS": "p@ss $x", "SERVICE": "180f", "QUEUE": "4", "HA": "true", "USER": ""]
        let config = try parse(yaml, environment: environment)
        #expect(config.mqtt.url == BrokerURL(scheme: .mqtt, host: "broker", port: 1883))
        #expect(config.mqtt.baseTopic == "ble")
        #expect(config.mqtt.password == "p@ss $x")
        #expect(config.mqtt.username == "nobody")
        #expect(config.bluetooth.services == [BluetoothUUID(uuid16: 0x180F)])
        #expect(config.commands == BridgeConfig.Commands(timeout: .seconds(3), queue: 4))
        #expect(config.homeAssistant.discovery)
    }

    @Test func loadsFileAndResolvesRelativePaths() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bridgecore-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("bridge.yaml").path
        try """
        mqtt:
          url: mqtts://h
          tls: { ca_file: ca.pem, cert_file: /abs/c.pem, key_file: keys/c.key }
        state_file: state/peripherals.json
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let config = try BridgeConfig.load(path: path, environment: [:], hostName: "h")
        #expect(config.mqtt.tls?.caFile == directory.path + "/ca.pem")
        #expect(config.mqtt.tls?.certFile == "/abs/c.pem")
        #expect(config.mqtt.tls?.keyFile == directory.path + "/keys/c.key")
        #expect(config.stateFile == directory.path + "/state/peripherals.json")

        let missing = directory.appendingPathComponent("nope.yaml").path
        #expect(throws: ConfigError(code: .unreadableFile, file: missing, line: 0, column: 0, message: "no such file")) {
            try BridgeConfig.load(path: missing, environment: [:])
        }
        #expect(ConfigError(code: .unreadableFile, file: "x.yaml", line: 0, column: 0, message: "no such file").description
            == "x.yaml: no such file")
    }

    @Test func currentHostNameIsNotEmpty() {
        #expect(!BridgeConfig.currentHostName().isEmpty)
    }
}
