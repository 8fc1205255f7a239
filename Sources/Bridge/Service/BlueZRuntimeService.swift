import BlueZ
import BridgeBase
import BridgeCore
import DBusKit
import Logging
import MQTT
import ServiceLifecycle
import Synchronization

/// The D-Bus connection, the BlueZ client and the supervisor with its sessions, as a `Service`.
/// It also feeds the broker's messages to command intake and its connection events to the
/// supervisor. Graceful shutdown stops the supervisor (bounded), then closes the bus.
///
/// `bridge/state` is `online` as soon as the broker takes the connection, also while the bus
/// or BlueZ is not there yet (the health object and the log say what is missing).
struct BlueZRuntimeService: Service {
    let config: BridgeConfig
    let mqtt: MQTTClient
    let logger: Logger
    let loop: PollLoop
    let connectBus: BridgeService.BusConnector

    func run() async throws {
        let topics = TopicMapper(config: config)
        let supervisor = SupervisorSlot()
        let shutdown = Mailbox<Void>()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [mqtt] in
                    for await event in mqtt.events {
                        guard case .connected = event else { continue }
                        if let mailbox = supervisor.mailbox {
                            mailbox.send(.brokerConnected)
                        } else {
                            mqtt.publish(topic: topics.bridgeState, payload: Array("online".utf8), qos: 1, retain: true)
                        }
                    }
                }
                defer { group.cancelAll() }
                guard let bus = await openBus(until: shutdown) else {
                    // No runtime ever ran: say `offline` here (the MQTT client drains it at its
                    // clean disconnect, which sends no last will).
                    mqtt.publish(topic: topics.bridgeState, payload: Array("offline".utf8), qos: 1, retain: true)
                    return
                }
                defer { bus.close() }
                let bluez = BlueZClient(connection: bus, logger: logger)
                let runtime = Runtime(config: config, central: bluez, broker: mqtt, clock: LiveClock(), logger: logger)
                supervisor.set(runtime.supervisorMailbox)
                if mqtt.isConnected { runtime.supervisorMailbox.send(.brokerConnected) }
                if shutdown.count > 0 { runtime.stop() }
                group.addTask { [mqtt] in
                    for await message in mqtt.messages { runtime.intake.handle(message) }
                }
                await runtime.run()
            }
        } onGracefulShutdown: {
            shutdown.send(())
            supervisor.mailbox?.send(.stop)
        }
    }

    /// Connects to the bus, retrying with backoff until it works or shutdown is requested.
    private func openBus(until shutdown: Mailbox<Void>) async -> DBusConnection? {
        var delay = Duration.milliseconds(500)
        let clock = LiveClock()
        while !Task.isCancelled && shutdown.count == 0 {
            do {
                return try connectBus(logger, loop)
            } catch {
                logger.warning("cannot connect to the D-Bus system bus: \(error); retrying in \(delay)")
            }
            if case .input = await shutdown.receive(until: clock.now.advanced(by: delay), clock: clock) { return nil }
            delay = min(delay * 2, .seconds(10))
        }
        return nil
    }
}

/// The supervisor's inbox once the runtime exists (the broker may connect before the bus does).
private final class SupervisorSlot: Sendable {
    private let state = Mutex<Mailbox<SupervisorInput>?>(nil)
    var mailbox: Mailbox<SupervisorInput>? { state.withLock { $0 } }
    func set(_ mailbox: Mailbox<SupervisorInput>) { state.withLock { $0 = mailbox } }
}
