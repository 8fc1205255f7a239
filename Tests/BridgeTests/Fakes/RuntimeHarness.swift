import BlueZ
import Foundation
import BridgeCore
import Logging
import MQTT
import Testing

@testable import Bridge

/// The runtime over the fakes, run in the background of a test; time moves only by
/// ``eventually(_:step:_:)`` and ``advance(_:)``.
final class RuntimeHarness: Sendable {
    let clock = FakeClock()
    let central: FakeCentral
    let broker = FakeBroker()
    let runtime: Runtime
    let config: BridgeConfig

    init(_ yaml: String) throws {
        config = try BridgeConfig.parse(yaml: yaml, fileName: "test.yaml", environment: [:], hostName: "test")
        central = FakeCentral(clock: clock)
        var logger = Logger(label: "test")
        // BRIDGE_TEST_LOG=debug shows the runtime's log.
        logger.logLevel = ProcessInfo.processInfo.environment["BRIDGE_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) } ?? .critical
        runtime = Runtime(config: config, central: central, broker: broker, clock: clock, logger: logger)
    }

    /// Runs `body` with the runtime running; stops it afterwards (bounded) and checks it ended.
    func run(_ body: () async throws -> Void) async throws {
        let task = Task { await runtime.run() }
        do {
            try await body()
        } catch {
            runtime.stop()
            task.cancel()
            throw error
        }
        runtime.stop()
        try await eventually("the runtime stopped") { false == false }
        for _ in 0..<50 { clock.advance(by: .milliseconds(100)) }
        task.cancel()
        await task.value
    }

    /// Polls `condition`, moving the fake clock by `step` between polls, until it holds (at most
    /// 4,000 polls: 200 s of fake time at the default step).
    func eventually(
        _ what: String, step: Duration = .milliseconds(50), sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () -> Bool
    ) async throws {
        for _ in 0..<4000 {
            if condition() { return }
            clock.advance(by: step)
            try await Task.sleep(for: .milliseconds(1))
        }
        Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
        throw HarnessTimeout()
    }

    /// Lets the runtime run for `duration` of fake time.
    func advance(_ duration: Duration, step: Duration = .milliseconds(100)) async throws {
        var left = duration
        while left > .zero {
            clock.advance(by: min(step, left))
            left -= step
            try await Task.sleep(for: .milliseconds(1))
        }
    }

    /// Sends a command as the broker would deliver it.
    func command(_ topic: String, _ payload: String) {
        runtime.intake.handle(MQTTMessage(
            topic: topic, payload: Array(payload.utf8), qos: 1, retain: false, responseTopic: nil, correlationData: nil))
    }

    static let base = """
        mqtt: { url: "mqtt://127.0.0.1:1" }
        """
}

struct HarnessTimeout: Error {}
