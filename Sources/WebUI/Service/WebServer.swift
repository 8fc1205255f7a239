import BridgeCore
import Hummingbird
import Logging
import MQTT
import ServiceLifecycle

/// The page server: the MQTT client, the HTTP server and the heartbeat, as one service group (SPEC §14).
///
/// Shut down in reverse order: the live streams end, the HTTP server stops, then the MQTT client disconnects.
public struct WebServer: Service {
    let settings: WebSettings
    let mqtt: MQTTConfiguration
    let logger: Logger

    /// Creates the server for `settings`, talking to the broker of `mqtt`.
    public init(settings: WebSettings, mqtt: MQTTConfiguration, logger: Logger) {
        self.settings = settings
        self.mqtt = mqtt
        self.logger = logger
    }

    /// The MQTT configuration of a bridge configuration: its broker and credentials, client id
    /// `<mqtt.client_id>-web`, no will.
    public static func mqttConfiguration(for config: BridgeConfig) -> MQTTConfiguration {
        let url = config.mqtt.url
        return MQTTConfiguration(
            host: url.host, port: url.port, clientID: config.mqtt.clientID + "-web",
            username: config.mqtt.username, password: config.mqtt.password,
            tls: url.usesTLS ? config.mqtt.tls ?? TLSSettings() : nil,
            protocolVersion: config.mqtt.protocolVersion == .v311 ? .v311 : .v5,
            keepAlive: config.mqtt.keepAlive,
            reconnectDelay: config.reconnect.initialDelay,
            maxReconnectDelay: config.reconnect.maxDelay)
    }

    public func run() async throws {
        let client = MQTTClient(configuration: mqtt, logger: logger)
        let core = PageCore(settings: settings, broker: MQTTPageBroker(client: client))
        let app = Self.application(core: core, session: Self.newSession(), logger: logger)
        let group = ServiceGroup(
            configuration: .init(
                services: [
                    .init(service: BrokerPumpService(client: client, core: core, logger: logger)),
                    .init(service: app),
                    .init(service: HeartbeatService(hub: core.hub)),
                ],
                logger: logger))
        try await group.run()
    }

    /// The HTTP application for `core`: it logs `listening on http://host:port` once bound.
    public static func application(core: PageCore, session: String, logger: Logger) -> some ApplicationProtocol {
        let settings = core.settings
        return Application(
            router: WebRouter.make(core: core, session: session),
            configuration: .init(address: .hostname(settings.listen.host, port: settings.listen.port), serverName: nil),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? settings.listen.port
                var bound = settings
                bound.listen.port = port
                logger.notice("listening on \(bound.url)")
            },
            logger: logger)
    }

    /// A fresh session cookie value: 32 random bytes in hex.
    public static func newSession() -> String {
        var generator = SystemRandomNumberGenerator()
        var text = ""
        for _ in 0..<4 {
            let word = generator.next() as UInt64
            let hex = String(word, radix: 16)
            text += String(repeating: "0", count: 16 - hex.count) + hex
        }
        return text
    }
}

extension WebServer: CustomStringConvertible {
    /// What the service lifecycle logs: the listen address and the broker, never the credentials.
    public var description: String { "WebServer(\(settings.url), \(mqtt.brokerURL))" }
}
