import BlueZ
import BridgeBase
import BridgeCore
import RuntimeCore
import DBusKit
import Logging
import MQTT
import ServiceLifecycle

/// The bridge as a `Service`: a group of the MQTT client and the BlueZ runtime. On graceful
/// shutdown the runtime stops first (publishes `offline`, stops notifications, disconnects,
/// bounded), then the bus closes, then the MQTT client disconnects.
public struct BridgeService: Service {
    /// Opens the D-Bus connection BlueZ is on, with its I/O on the given loop.
    public typealias BusConnector = @Sendable (Logger, PollLoop) throws(DBusError) -> DBusConnection

    let config: BridgeConfig
    let logger: Logger
    let connectBus: BusConnector

    /// Creates the service. `connectBus` defaults to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`).
    public init(
        config: BridgeConfig, logger: Logger,
        connectBus: @escaping BusConnector = { logger, loop throws(DBusError) in
            try DBusConnection.system(logger: logger, loop: loop)
        }
    ) {
        self.config = config
        self.logger = logger
        self.connectBus = connectBus
    }

    /// The MQTT client configuration for a bridge configuration: the broker, its credentials and
    /// TLS files (with an `mqtts://` URL), the protocol, the keep-alive, the reconnect backoff of
    /// `reconnect` (shared with the peripherals) and `offline` on `bridge/state` as last will; the keep-alive probe
    /// (SPEC §10 rule 7: a silent broker is noticed within a keep-alive) and, in a cluster, nothing undelivered
    /// sent after a loss (the broker has published the will: another bridge may own the devices by then).
    public static func mqttConfiguration(for config: BridgeConfig) -> MQTTConfiguration {
        let topics = TopicMapper(config: config)
        let url = config.mqtt.url
        return MQTTConfiguration(
            host: url.host, port: url.port, clientID: config.mqtt.clientID,
            username: config.mqtt.username, password: config.mqtt.password,
            tls: url.usesTLS ? config.mqtt.tls ?? TLSSettings() : nil,
            protocolVersion: config.mqtt.protocolVersion == .v311 ? .v311 : .v5,
            keepAlive: config.mqtt.keepAlive,
            will: MQTTMessage(topic: topics.bridgeState, payload: Array("offline".utf8), qos: 1, retain: true),
            reconnectDelay: config.reconnect.initialDelay,
            maxReconnectDelay: config.reconnect.maxDelay,
            probeTopic: topics.keepAliveProbe,
            forgetUnsentOnLoss: config.cluster.enabled)
    }

    public func run() async throws {
        // One I/O thread: D-Bus, the notification sockets and the broker's socket. A notification
        // is read and its publish written in the same turn of this loop, with one wake-up.
        let loop = PollLoop(name: "bridge-io")
        loop.start()
        defer { loop.stop() }
        let mqtt = MQTTClient(configuration: Self.mqttConfiguration(for: config), logger: logger, loop: loop)
        let runtime = BlueZRuntimeService(
            config: config, broker: mqtt, clock: LiveClock(), logger: logger
        ) { [connectBus, logger] () throws(DBusError) in
            let bus = try connectBus(logger, loop)
            return .init(central: BlueZClient(connection: bus, logger: logger), close: { bus.close() })
        }
        let group = ServiceGroup(configuration: .init(
            services: [
                .init(service: MQTTService(client: mqtt)),
                .init(service: runtime, successTerminationBehavior: .gracefullyShutdownGroup),
                // Last, so shut down first: STOPPING=1 as the shutdown begins.
                .init(service: LoopWatchdogService(loop: loop, notifier: SystemdNotifier.fromEnvironment(), logger: logger)),
            ],
            logger: logger))
        try await group.run()
        logger.info("stopped")
    }
}

extension BridgeService: CustomStringConvertible {
    /// What the service lifecycle logs of this service (`sl-service=`): its name and broker, never its configuration
    /// (the broker password, bindkeys, passkeys and IRKs are in there).
    public var description: String {
        let url = config.mqtt.url
        return "BridgeService(\(url.scheme.rawValue)://\(url.host):\(url.port))"
    }
}
