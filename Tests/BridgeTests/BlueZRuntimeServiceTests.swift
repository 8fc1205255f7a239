import BridgeBase
import BridgeCore
import ConfigLoader
import DBusKit
import Logging
import MQTT
import ServiceLifecycle
import ServiceLifecycleTestKit
import Synchronization
import Testing

@testable import Bridge

/// ``BlueZRuntimeService`` over the fake broker, a fake central and the fake clock: what it
/// subscribes to, what a broker connection makes it publish before and after BlueZ's bus is
/// there, that the broker's messages reach command intake, and a clean shutdown.
@Suite(.timeLimit(.minutes(1))) struct BlueZRuntimeServiceTests {
    /// Opens the central for the service: fails `failures` times, then hands over `central`.
    /// Each attempt is announced in ``attempts``.
    final class Opener: Sendable {
        private struct State {
            var failures: Int
            var closed = 0
        }

        private let state: Mutex<State>
        let central: FakeCentral
        let attempts = Mailbox<Int>()
        private let count = Mutex(0)

        init(central: FakeCentral, failures: Int) {
            self.central = central
            state = Mutex(State(failures: failures))
        }

        var closed: Int { state.withLock { $0.closed } }

        func open() throws(DBusError) -> BlueZRuntimeService.OpenedCentral {
            let attempt = count.withLock {
                $0 += 1
                return $0
            }
            attempts.send(attempt)
            let fail = state.withLock { s -> Bool in
                guard s.failures > 0 else { return false }
                s.failures -= 1
                return true
            }
            if fail { throw DBusError("org.freedesktop.DBus.Error.FileNotFound", "no system bus in this test") }
            return .init(central: central, close: { [self] in state.withLock { $0.closed += 1 } })
        }
    }

    /// The fake clock, announcing every deadline waited for: a test awaits the service's wait
    /// before it moves time.
    final class ObservedClock: BridgeClock {
        let base = FakeClock()
        let waits = Mailbox<BridgeInstant>()

        var now: BridgeInstant { base.now }
        var unixTime: Int64 { base.unixTime }

        func sleep(until deadline: BridgeInstant) async throws {
            waits.send(deadline)
            try await base.sleep(until: deadline)
        }

        func advance(by duration: Duration) { base.advance(by: duration) }
    }

    private struct Fixture {
        let clock = ObservedClock()
        let broker = FakeBroker()
        let opener: Opener
        let service: BlueZRuntimeService
        let topics: TopicMapper

        init(_ yaml: String = "", failures: Int) throws {
            let config = try BridgeConfig.parse(
                yaml: #"mqtt: { url: "mqtt://127.0.0.1:1" }"# + "\n" + yaml, fileName: "test.yaml", environment: [:],
                hostName: "test")
            topics = TopicMapper(config: config)
            opener = Opener(central: FakeCentral(clock: clock.base), failures: failures)
            var logger = Logger(label: "test")
            logger.logLevel = .critical
            service = BlueZRuntimeService(
                config: config, broker: broker, clock: clock, logger: logger, openCentral: opener.open)
        }

        /// Waits for the service, the first child of `group` to end, moving the fake clock meanwhile
        /// (the supervisor's bounded shutdown waits on it).
        func finish(_ group: inout ThrowingTaskGroup<Void, any Error>) async throws {
            group.addTask { [clock] in
                while !Task.isCancelled {
                    clock.advance(by: .milliseconds(100))
                    try? await Task.sleep(for: .milliseconds(1))
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    @Test("before BlueZ's bus is there: subscribed to the commands, `online` on a broker connection, retries with backoff, `offline` at shutdown")
    func withoutTheBus() async throws {
        let f = try Fixture(failures: .max)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await f.service.run() }
                #expect(await f.opener.attempts.receive() == 1)
                #expect(f.broker.subscriptions == [
                    "ble/+/+/+/set", "ble/+/+/+/get", "ble/bridge/request/+", "ble/bridge/request/device/+", "ble/config/devices/+",
                ])
                #expect(f.broker.texts(f.topics.bridgeState).isEmpty)
                f.broker.connect()
                try await f.broker.awaitPublish(on: f.topics.bridgeState, where: { $0 == "online" })
                // The bus is tried again after 500 ms, then after 1 s.
                let start = f.clock.now
                #expect(await f.clock.waits.receive() == start.advanced(by: .milliseconds(500)))
                f.clock.advance(by: .milliseconds(500))
                #expect(await f.opener.attempts.receive() == 2)
                #expect(await f.clock.waits.receive() == start.advanced(by: .milliseconds(1500)))
                let mark = f.broker.mark
                trigger.triggerGracefulShutdown()
                try await group.next()
                #expect(f.broker.texts(f.topics.bridgeState) == ["online", "offline"])
                #expect(f.broker.all.dropFirst(mark).map(\.message.topic) == [f.topics.bridgeState])
                #expect(f.opener.closed == 0)
            }
        }
    }

    @Test("with the runtime running: each broker connection makes the supervisor publish state and devices; messages reach command intake; shutdown closes the bus")
    func withTheRuntime() async throws {
        let f = try Fixture("homeassistant: { discovery: true }", failures: 1)
        try await testGracefulShutdown { trigger in
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { try await f.service.run() }
                #expect(await f.opener.attempts.receive() == 1)
                #expect(f.broker.subscriptions == [
                    "ble/+/+/+/set", "ble/+/+/+/get", "ble/bridge/request/+", "ble/bridge/request/device/+", "ble/config/devices/+",
                    "homeassistant/status",
                    "homeassistant/sensor/+/+/config",
                ])
                // Connected while the bus is away: the service says `online` itself.
                f.broker.connect()
                try await f.broker.awaitPublish(on: f.topics.bridgeState, where: { $0 == "online" })
                #expect(f.broker.texts(f.topics.bridgeDevices).isEmpty)
                #expect(await f.clock.waits.receive() == f.clock.now.advanced(by: .milliseconds(500)))
                f.clock.advance(by: .milliseconds(500))
                #expect(await f.opener.attempts.receive() == 2)
                // The runtime starts on a connected broker: its supervisor publishes state and the
                // device list (only the supervisor publishes that).
                try await f.broker.awaitPublish(on: f.topics.bridgeDevices)
                #expect(f.broker.texts(f.topics.bridgeState).count >= 2)

                // A reconnection: the supervisor publishes state and devices again.
                f.broker.disconnect()
                var mark = f.broker.mark
                f.broker.connect()
                try await f.broker.awaitPublish(on: f.topics.bridgeState, after: mark, where: { $0 == "online" })
                try await f.broker.awaitPublish(on: f.topics.bridgeDevices, after: mark)

                // A command for a device nobody knows, delivered by the broker, is answered by intake.
                mark = f.broker.mark
                f.broker.deliver("ble/nosuch/180f/2a19/get", "")
                let result = try await f.broker.awaitPublish(on: "ble/nosuch/180f/2a19/result", after: mark)
                #expect(result.text.contains(#""code":"unknown_characteristic""#))

                trigger.triggerGracefulShutdown()
                try await f.finish(&group)
                #expect(f.broker.last(f.topics.bridgeState) == "offline")
                #expect(f.opener.closed == 1)
            }
        }
    }
}
