import BlueZ
import BridgeCore
import DBusKit
import Logging
import MQTT
import ServiceLifecycle

/// The bridge as a `Service`: connects to the broker and to BlueZ and runs until graceful
/// shutdown, then publishes `offline`, stops notifications, disconnects and returns.
public struct BridgeService: Service {
    /// Opens the D-Bus connection BlueZ is on.
    public typealias BusConnector = @Sendable (Logger) throws(DBusError) -> DBusConnection

    let config: BridgeConfig
    let logger: Logger
    let connectBus: BusConnector

    /// Creates the service. `connectBus` defaults to the system bus (`DBUS_SYSTEM_BUS_ADDRESS`).
    public init(
        config: BridgeConfig, logger: Logger,
        connectBus: @escaping BusConnector = { logger throws(DBusError) in try DBusConnection.system(logger: logger) }
    ) {
        self.config = config
        self.logger = logger
        self.connectBus = connectBus
    }

    /// The MQTT client configuration for a bridge configuration, with `offline` as last will.
    public static func mqttConfiguration(for config: BridgeConfig) -> MQTTConfiguration {
        let topics = TopicMapper(config: config)
        let url = config.mqtt.url
        var tls: MQTTConfiguration.TLS?
        if url.usesTLS {
            tls = MQTTConfiguration.TLS(
                caFile: config.mqtt.tls?.caFile, certFile: config.mqtt.tls?.certFile, keyFile: config.mqtt.tls?.keyFile)
        }
        return MQTTConfiguration(
            host: url.host, port: url.port, clientID: config.mqtt.clientID,
            username: config.mqtt.username, password: config.mqtt.password, tls: tls,
            protocolVersion: config.mqtt.protocolVersion == .v311 ? .v311 : .v5,
            keepAlive: config.mqtt.keepAlive,
            will: MQTTMessage(topic: topics.bridgeState, payload: Array("offline".utf8), qos: 1, retain: true))
    }

    public func run() async throws {
        let mqtt = MQTTClient(configuration: Self.mqttConfiguration(for: config), logger: logger)
        let topics = TopicMapper(config: config)
        mqtt.subscribe(topics.setFilter, qos: 1)
        mqtt.subscribe(topics.getFilter, qos: 1)
        mqtt.subscribe(topics.bridgeRequestFilter, qos: 1)
        let homeAssistantStatus = HomeAssistantDiscovery.statusTopic(topics)
        if config.homeAssistant.discovery { mqtt.subscribe(homeAssistantStatus, qos: 1) }
        mqtt.start()
        guard let bus = await openBus() else {
            await mqtt.disconnect()
            return
        }
        let bluez = BlueZClient(connection: bus, logger: logger)
        let engine = BridgeEngine(config: config, mqtt: mqtt, bluez: bluez, logger: logger)
        let commands = CommandDispatcher(
            topics: topics, directory: engine.directory, bluez: bluez, mqtt: mqtt, router: engine.router,
            timeout: config.commands.timeout, capacity: config.commands.queue, logger: logger,
            onBridgeRequest: { command, message in engine.send(.request(command: command, message: message)) })
        let consumer = Task {
            for await message in mqtt.messages {
                if message.topic == homeAssistantStatus {
                    if message.payload == Array("online".utf8) { engine.send(.homeAssistantOnline) }
                    continue
                }
                commands.handle(message)
            }
        }
        defer { consumer.cancel() }
        await withGracefulShutdownHandler {
            await engine.run()
        } onGracefulShutdown: {
            engine.requestStop()
        }
        // D-Bus first: no value can reach the MQTT client once it is gone.
        bus.close()
        await mqtt.disconnect()
        logger.info("stopped")
    }

    /// Connects to the bus, retrying with backoff until it works or shutdown is requested.
    private func openBus() async -> DBusConnection? {
        var delay = Duration.milliseconds(500)
        while !Task.isShuttingDownGracefully && !Task.isCancelled {
            do {
                return try connectBus(logger)
            } catch {
                logger.warning("cannot connect to the D-Bus system bus: \(error); retrying in \(delay)")
            }
            try? await Task.sleep(for: delay)
            delay = min(delay * 2, .seconds(10))
        }
        return nil
    }
}
