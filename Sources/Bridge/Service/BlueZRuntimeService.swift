import BlueZ
import BridgeCore
import DBusKit
import Logging
import MQTT
import ServiceLifecycle

/// The D-Bus connection, the BlueZ client and the supervisor with its sessions, as a `Service`.
/// It also feeds the broker's messages to command intake and its connection events to the
/// supervisor. Graceful shutdown stops the supervisor (bounded), then closes the bus.
struct BlueZRuntimeService: Service {
    let config: BridgeConfig
    let mqtt: MQTTClient
    let logger: Logger
    let connectBus: BridgeService.BusConnector

    func run() async throws {
        guard let bus = await openBus() else { return }
        defer { bus.close() }
        let bluez = BlueZClient(connection: bus, logger: logger)
        let runtime = Runtime(config: config, central: bluez, broker: mqtt, clock: LiveClock(), logger: logger)
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask {
                    for await message in mqtt.messages { runtime.intake.handle(message) }
                }
                group.addTask {
                    for await event in mqtt.events {
                        if case .connected = event { runtime.supervisorMailbox.send(.brokerConnected) }
                    }
                }
                await runtime.run()
                group.cancelAll()
            }
        } onGracefulShutdown: {
            runtime.stop()
        }
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
