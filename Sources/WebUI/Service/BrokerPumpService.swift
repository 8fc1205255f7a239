import Logging
import MQTT
import ServiceLifecycle

/// Runs the server's MQTT client: subscribes to `{base}/#`, hands every message to the ``PageCore``, and
/// disconnects on graceful shutdown.
public struct BrokerPumpService: Service {
    let client: MQTTClient
    let core: PageCore
    let logger: Logger

    /// Creates the service.
    public init(client: MQTTClient, core: PageCore, logger: Logger) {
        self.client = client
        self.core = core
        self.logger = logger
    }

    public func run() async throws {
        client.subscribe(core.subscription, qos: 1)
        client.start()
        await withDiscardingTaskGroup { group in
            group.addTask {
                for await message in client.messages {
                    core.receive(topic: message.topic, payload: message.payload)
                }
            }
            group.addTask {
                for await event in client.events {
                    if case .disconnected(let reason) = event {
                        logger.debug("broker connection ended: \(reason)")
                    }
                }
            }
            try? await gracefulShutdown()
            await client.disconnect()
        }
    }
}
