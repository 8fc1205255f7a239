import BlueZ
import BridgeCore
import RuntimeCore
import DBusKit
import Logging
import MQTT
import ServiceLifecycle
import Synchronization

/// The BlueZ side of the bridge and the supervisor with its sessions, as a `Service`, over the two
/// seams: it opens a ``BluetoothCentral`` (retrying with backoff until that works), subscribes the
/// ``MessageBroker`` to what command intake takes and feeds it the broker's messages, and tells
/// the supervisor of every broker connection. Graceful shutdown stops the supervisor (bounded),
/// then closes the central.
///
/// `bridge/state` is `online` as soon as the broker takes the connection, also while BlueZ's bus
/// is not there yet (the health object and the log say what is missing).
struct BlueZRuntimeService: Service {
    /// An opened central and how to close what it runs on (the D-Bus connection).
    struct OpenedCentral: Sendable {
        var central: any BluetoothCentral
        var close: @Sendable () -> Void
    }

    /// Opens the central; throws while its bus cannot be reached.
    typealias CentralOpener = @Sendable () throws(DBusError) -> OpenedCentral

    let config: BridgeConfig
    let broker: any MessageBroker
    let clock: any BridgeClock
    let logger: Logger
    let openCentral: CentralOpener

    func run() async throws {
        let topics = TopicMapper(config: config)
        let filters = CommandIntake.filters(topics: topics, homeAssistantDiscovery: config.homeAssistant.discovery)
        for filter in filters { broker.subscribe(filter, qos: 1) }
        let supervisor = SupervisorSlot()
        let shutdown = Mailbox<Void>()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                group.addTask { [broker] in
                    for await event in broker.events {
                        guard case .connected = event else {
                            supervisor.mailbox?.send(.brokerDisconnected)
                            continue
                        }
                        if let mailbox = supervisor.mailbox {
                            mailbox.send(.brokerConnected)
                        } else {
                            broker.publish(topics.bridgeState, text: "online", retain: true)
                        }
                    }
                }
                defer { group.cancelAll() }
                guard let opened = await openCentral(until: shutdown) else {
                    // No runtime ever ran: say `offline` here (the MQTT client drains it at its
                    // clean disconnect, which sends no last will).
                    broker.publish(topics.bridgeState, text: "offline", retain: true)
                    return
                }
                defer { opened.close() }
                let runtime = Runtime(config: config, central: opened.central, broker: broker, clock: clock, logger: logger)
                supervisor.set(runtime.supervisorMailbox)
                if broker.isConnected { runtime.supervisorMailbox.send(.brokerConnected) }
                if shutdown.count > 0 { runtime.stop() }
                group.addTask { [broker] in await runtime.intake.run(broker.messages) }
                await runtime.run()
            }
        } onGracefulShutdown: {
            shutdown.send(())
            supervisor.mailbox?.send(.stop)
        }
    }

    /// Opens the central, retrying with backoff (500 ms doubling up to 10 s) until it works or
    /// shutdown is requested (nil then).
    private func openCentral(until shutdown: Mailbox<Void>) async -> OpenedCentral? {
        var delay = Duration.milliseconds(500)
        while !Task.isCancelled && shutdown.count == 0 {
            do {
                return try openCentral()
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

extension BlueZRuntimeService: CustomStringConvertible {
    /// What the service lifecycle logs of this service (`sl-services=` at debug): never its configuration (the broker
    /// password, bindkeys, passkeys and IRKs are in there).
    var description: String { "BlueZRuntimeService(\(config.mqtt.url.host):\(config.mqtt.url.port))" }
}
