import BridgeCore
import Testing

@testable import ConfigLoader

/// SPEC §14's settings (`management`, `devices_file`, `web`) and run-time device entries decoded with bridge.yaml's
/// rules.
@Suite struct ManagementConfigTests {
    static func parse(_ yaml: String) throws(ConfigError) -> BridgeConfig {
        try BridgeConfig.parse(yaml: "mqtt: { url: \"mqtt://127.0.0.1:1\" }\n" + yaml, environment: ["T": "secret"], hostName: "h")
    }

    @Test("defaults: management on, devices.json beside state_file, the page on loopback without a token")
    func defaults() throws {
        let config = try Self.parse("state_file: /var/lib/b/peripherals.json")
        #expect(config.management)
        #expect(config.devicesFilePath == "/var/lib/b/devices.json")
        #expect(config.web == BridgeConfig.Web(listen: "127.0.0.1:8099", authToken: nil))
        #expect(try Self.parse("").devicesFilePath == nil)
        #expect(try Self.parse("devices_file: d.json").devicesFilePath == "d.json")
        #expect(try Self.parse("management: false").management == false)
    }

    @Test("web: a non-loopback listen needs auth_token; bad addresses are refused with the key named")
    func web() throws {
        #expect(try Self.parse("web: { listen: \"0.0.0.0:8099\", auth_token: \"${T}\" }").web.authToken == "secret")
        #expect(try Self.parse("web: { listen: \"[::1]:9000\" }").web.listen == "[::1]:9000")
        #expect(throws: ConfigError.self) { try Self.parse("web: { listen: \"0.0.0.0:8099\" }") }
        do {
            _ = try Self.parse("web: { listen: \"192.168.1.5:8099\" }")
            Issue.record("accepted a LAN address without a token")
        } catch {
            #expect(error.message.contains("auth_token"))
        }
        for bad in ["8099", "host:0", "host:70000", ":80", "[::1]8099", "a b:80"] {
            #expect(throws: ConfigError.self, "\(bad)") { try Self.parse("web: { listen: \"\(bad)\" }") }
        }
        #expect(WebListenAddress("localhost:1")?.isLoopback == true)
        #expect(WebListenAddress("127.0.0.2:1")?.isLoopback == true)
        #expect(WebListenAddress("10.0.0.1:1")?.isLoopback == false)
    }

    @Test("a run-time entry is checked like a bridge.yaml entry, with the same message, and expands no ${VAR}")
    func addedDevice() throws {
        let config = try Self.parse("")
        func decode(_ json: String) throws(ConfigError) -> BridgeConfig.Device {
            try config.decodeAddedDevice(try! JSONParser.parse(Array(json.utf8)))
        }
        let device = try decode(#"{"name":"pantry","match":{"address":"C0:FF:EE:00:00:01"},"connection":"poll","poll_interval":"10m"}"#)
        #expect(device.name == "pantry")
        #expect(device.connection.name == "poll")
        // The same entry in bridge.yaml gives the same words.
        let yamlMessage: String
        do {
            _ = try Self.parse("devices:\n  - { name: pantry, match: { address: \"zz\" } }")
            yamlMessage = ""
        } catch { yamlMessage = error.message }
        do {
            _ = try decode(#"{"name":"pantry","match":{"address":"zz"}}"#)
            Issue.record("accepted a bad address")
        } catch {
            #expect(error.message == yamlMessage)
        }
        #expect(throws: ConfigError.self) { try decode(#"{"match":{"address":"C0:FF:EE:00:00:01"}}"#) }
        #expect(throws: ConfigError.self) { try decode(#"{"name":"x","match":{"address":"C0:FF:EE:00:00:01"},"poll_interval":true}"#) }
        let literal = try decode(#"{"name":"x","match":{"address":"C0:FF:EE:00:00:01"},"connection":"advertisement","advertisement":{"timeout":"1m"}}"#)
        #expect(literal.name == "x")
        // Nothing is expanded (T is "secret" in this environment): the text stays as it was sent.
        do {
            let named = try decode(#"{"name":"${T}","match":{"address":"C0:FF:EE:00:00:01"}}"#)
            #expect(named.name == "${T}")
        } catch {
            #expect(error.message.contains("${T}") && !error.message.contains("secret"))
        }
    }

    @Test("the request topics take device/add; config/devices entries are their own topic; config is reserved")
    func topics() throws {
        let topics = TopicMapper(config: try Self.parse(""))
        #expect(topics.parse("ble/bridge/request/device/add") == .bridgeRequest(command: "device/add"))
        #expect(topics.parse("ble/bridge/request/scan") == .bridgeRequest(command: "scan"))
        #expect(topics.parse("ble/bridge/request/other/add") == nil)
        #expect(topics.parse("ble/bridge/request/device/add/x") == nil)
        #expect(topics.parse("ble/config/devices/porch") == .configDevice(segment: "porch"))
        #expect(topics.commandFilters.contains("ble/bridge/request/device/+"))
        #expect(topics.commandFilters.contains("ble/config/devices/+"))
        #expect(TopicMapper.reservedSegments.contains("config"))
        let cluster = TopicMapper(config: try Self.parse("cluster: { enabled: true }\nbridge: { id: k }"))
        #expect(cluster.parse("ble/bridges/k/request/device/rename") == .bridgeRequest(command: "device/rename"))
        #expect(cluster.parse("ble/bridges/other/request/device/rename") == nil)
    }
}
