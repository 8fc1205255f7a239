import Logging
import MQTT
import ServiceLifecycle

/// The MQTT client as a `Service`: connects (and reconnects) while it runs; on graceful shutdown
/// it waits briefly for unacknowledged messages and disconnects cleanly (no last will).
struct MQTTService: Service {
    let client: MQTTClient

    func run() async throws {
        client.start()
        try? await gracefulShutdown()
        await client.disconnect()
    }
}
