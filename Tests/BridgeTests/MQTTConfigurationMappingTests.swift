import BridgeCore
import ConfigLoader
import MQTT
import Testing

@testable import Bridge

/// `BridgeService.mqttConfiguration(for:)`: what of `bridge.yaml` reaches the MQTT client.
@Suite struct MQTTConfigurationMappingTests {
    private func configuration(_ yaml: String) throws -> MQTTConfiguration {
        let config = try BridgeConfig.parse(yaml: yaml, fileName: "test.yaml", environment: [:], hostName: "test")
        return BridgeService.mqttConfiguration(for: config)
    }

    @Test("reconnect.* is the broker's reconnect backoff too (documented for peripherals and broker)")
    func reconnectReachesTheBroker() throws {
        let c = try configuration("""
            mqtt: { url: "mqtt://127.0.0.1:1883" }
            reconnect: { initial_delay: 250ms, max_delay: 7s }
            """)
        #expect(c.reconnectDelay == .milliseconds(250))
        #expect(c.maxReconnectDelay == .seconds(7))
    }

    @Test("without reconnect, the broker backs off as bridge.yaml documents: 1 s up to 60 s")
    func reconnectDefaults() throws {
        let c = try configuration(#"mqtt: { url: "mqtt://127.0.0.1:1883" }"#)
        #expect(c.reconnectDelay == .seconds(1))
        #expect(c.maxReconnectDelay == .seconds(60))
    }

    @Test("mqtt.tls reaches the client unchanged with mqtts://; mqtts:// alone trusts the system CAs")
    func tlsFiles() throws {
        let files = try configuration("""
            mqtt:
              url: "mqtts://broker.example:8884"
              tls: { ca_file: /etc/ca.pem, cert_file: /etc/c.pem, key_file: /etc/c.key }
            """)
        #expect(files.tls == TLSSettings(caFile: "/etc/ca.pem", certFile: "/etc/c.pem", keyFile: "/etc/c.key"))
        #expect(files.port == 8884)
        let bare = try configuration(#"mqtt: { url: "mqtts://broker.example" }"#)
        #expect(bare.tls == TLSSettings())
        let plain = try configuration("""
            mqtt:
              url: "mqtt://broker.example"
              tls: { ca_file: /etc/ca.pem }
            """)
        #expect(plain.tls == nil)
    }

    @Test("the broker, credentials, protocol and keep-alive, and `offline` on bridge/state as last will")
    func brokerAndWill() throws {
        let c = try configuration("""
            mqtt:
              url: "mqtt://broker.example:1884"
              base_topic: home/ble
              client_id: bridge-1
              username: u
              password: p
              protocol: "3.1.1"
              keepalive: 20s
            """)
        #expect(c.host == "broker.example")
        #expect(c.port == 1884)
        #expect(c.clientID == "bridge-1")
        #expect(c.username == "u")
        #expect(c.password == "p")
        #expect(c.protocolVersion == .v311)
        #expect(c.keepAlive == .seconds(20))
        #expect(c.will == MQTTMessage(topic: "home/ble/bridge/state", payload: Array("offline".utf8), qos: 1, retain: true))
    }

    @Test("what the service lifecycle logs of the service (sl-service=) holds no secret of the configuration")
    func serviceDescriptionHidesSecrets() throws {
        let config = try BridgeConfig.parse(
            yaml: """
                mqtt: { url: "mqtt://broker.example:1884", username: bridge, password: s3cr3t-key }
                devices:
                  - { match: { address: "A4:C1:38:00:00:01" }, name: t, connection: advertisement, advertisement: { bindkey: "231d39c1d7cc1ab1aee224cd096db932" } }
                """, fileName: "test.yaml", environment: [:], hostName: "test")
        let text = String(describing: BridgeService(config: config, logger: .init(label: "test")))
        #expect(text == "BridgeService(mqtt://broker.example:1884)")
        #expect(!text.contains("s3cr3t") && !text.contains("231d39c1"))
    }
}
