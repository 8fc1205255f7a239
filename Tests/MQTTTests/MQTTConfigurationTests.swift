import BridgeBase
import Testing

@testable import MQTT

@Suite("MQTTConfiguration URL parsing")
struct MQTTConfigurationTests {
    @Test("mqtt:// with a port")
    func plainWithPort() throws {
        let configuration = try MQTTConfiguration(url: "mqtt://broker.example:1884", clientID: "c")
        #expect(configuration.host == "broker.example")
        #expect(configuration.port == 1884)
        #expect(configuration.tls == nil)
        #expect(configuration.clientID == "c")
        #expect(configuration.brokerURL == "mqtt://broker.example:1884")
    }

    @Test("mqtt:// defaults to port 1883, MQTT 5 and the documented timings")
    func plainDefaults() throws {
        let configuration = try MQTTConfiguration(url: "mqtt://127.0.0.1", clientID: "c")
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 1883)
        #expect(configuration.protocolVersion == .v5)
        #expect(configuration.keepAlive == .seconds(30))
        #expect(configuration.reconnectDelay == .milliseconds(500))
        #expect(configuration.maxReconnectDelay == .seconds(30))
        #expect(configuration.username == nil)
        #expect(configuration.will == nil)
    }

    @Test("mqtts:// enables TLS and defaults to port 8883")
    func tlsDefaults() throws {
        let configuration = try MQTTConfiguration(url: "mqtts://secure.example", clientID: "c")
        #expect(configuration.port == 8883)
        #expect(configuration.tls == TLSSettings())
        #expect(configuration.brokerURL == "mqtts://secure.example:8883")
        let withPort = try MQTTConfiguration(url: "MQTTS://secure.example:9999/", clientID: "c")
        #expect(withPort.port == 9999)
        #expect(withPort.tls != nil)
    }

    @Test("IPv6 addresses in brackets")
    func ipv6() throws {
        let configuration = try MQTTConfiguration(url: "mqtt://[::1]:1885", clientID: "c")
        #expect(configuration.host == "::1")
        #expect(configuration.port == 1885)
        #expect(configuration.brokerURL == "mqtt://[::1]:1885")
        let noPort = try MQTTConfiguration(url: "mqtt://[fe80::1]", clientID: "c")
        #expect(noPort.host == "fe80::1")
        #expect(noPort.port == 1883)
    }

    @Test("credentials in the URL")
    func userInfo() throws {
        let configuration = try MQTTConfiguration(url: "mqtt://bridge:s3cr:et@host:1883", clientID: "c")
        #expect(configuration.username == "bridge")
        #expect(configuration.password == "s3cr:et")
        #expect(configuration.host == "host")
        let userOnly = try MQTTConfiguration(url: "mqtt://bridge@host", clientID: "c")
        #expect(userOnly.username == "bridge")
        #expect(userOnly.password == nil)
    }

    @Test(
        "invalid URLs are rejected with .invalidURL",
        arguments: [
            "", "host:1883", "http://host", "mqtt://", "mqtt://:1883", "mqtt://host:", "mqtt://host:abc",
            "mqtt://host:0", "mqtt://host:65536", "mqtt://host:123456", "mqtt://host:-1", "mqtt://::1",
            "mqtt://[::1", "mqtt://[::1]x", "mqtt://host/path", "mqtt://host?x=1", "mqtt://@host",
            "mqtt://ho st",
        ])
    func invalid(url: String) {
        #expect {
            _ = try MQTTConfiguration(url: url, clientID: "c")
        } throws: { error in
            guard let error = error as? MQTTError else { return false }
            return error.code == .invalidURL && error.message.contains("invalid MQTT URL")
        }
    }

    @Test("memberwise initialiser defaults")
    func memberwise() {
        let configuration = MQTTConfiguration(host: "h", clientID: "id")
        #expect(configuration.port == 1883)
        #expect(configuration.protocolVersion == .v5)
        #expect(configuration.tls == nil)
        #expect(configuration.brokerURL == "mqtt://h:1883")
    }
}
