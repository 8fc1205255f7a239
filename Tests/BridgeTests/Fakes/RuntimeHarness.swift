import BlueZ
import ConfigLoader
import Foundation
import BridgeCore
import Logging
import MQTT
import Synchronization
import Testing

@testable import Bridge

/// The runtime over the fakes, run in the background of a test; time moves only by
/// ``eventually(_:step:sourceLocation:_:)`` and ``advance(_:sourceLocation:)``.
///
/// Both return only when the runtime is idle (``settle(sourceLocation:)``): every job of the
/// runtime has run, so every loop is parked (in its mailbox, on the fake clock, on a held
/// `FakeCentral` call) and nothing is left to do until the test acts. A check after them sees
/// everything the runtime does by then, and "nothing happened" is a fact, not a race with the
/// runtime: the runtime runs on a ``RuntimeExecutor``, which counts its jobs (its documentation
/// says why that count is exact). `advance` moves the fake clock from one due deadline to the
/// next, settling at each, as `NIOAsyncTestingEventLoop.advanceTime` runs due work in order.
final class RuntimeHarness: Sendable {
    let executor = RuntimeExecutor()
    let clock: FakeClock
    let central: FakeCentral
    let broker = FakeBroker()
    let runtime: Runtime
    let config: BridgeConfig

    /// Real time a settle may take before the test fails: only a runtime that never goes idle
    /// (a busy loop) or a machine stalled for that long reaches it.
    static let settleTimeout: Duration = .seconds(60)
    /// Fake time the runtime has to end after ``Runtime/stop()`` (the supervisor bounds its
    /// sessions' shutdown to 3 s).
    static let stopTimeout: Duration = .seconds(10)

    private struct State {
        var ended = false
        var escapesReported = 0
        var shutdownTook: Duration?
    }

    private let state = Mutex(State())

    /// The runtime's log at `notice` and above, as `"level message"` lines.
    var logLines: [String] { logSink.lines.withLock { $0 } }
    private let logSink = LogSink()

    /// `families`: the advertisement families the runtime asks (tests add fakes of their own).
    /// `adjust`: changes the parsed configuration before the runtime is built (a device's profile binding, while
    /// tests cannot load profiles from YAML).
    init(
        _ yaml: String, families: [any AdvertisementFamily.Type] = AdvertisementDecoder.families,
        adjust: (inout BridgeConfig) throws -> Void = { _ in }
    ) throws {
        var config = try BridgeConfig.parse(yaml: yaml, fileName: "test.yaml", environment: [:], hostName: "test")
        try adjust(&config)
        self.config = config
        clock = FakeClock(executor: executor)
        central = FakeCentral(clock: clock)
        // BRIDGE_TEST_LOG=debug shows the runtime's log.
        let shown = ProcessInfo.processInfo.environment["BRIDGE_TEST_LOG"].flatMap { Logger.Level(rawValue: $0) }
        let sink = logSink
        // Each handler keeps its own level (setting the logger's would set both).
        let logger = Logger(label: "test") { label in
            var stream = StreamLogHandler.standardError(label: label)
            stream.logLevel = shown ?? .critical
            return MultiplexLogHandler([stream, CollectingLogHandler(sink: sink)])
        }
        runtime = Runtime(config: config, central: central, broker: broker, clock: clock, logger: logger, families: families)
    }

    /// Whether ``Runtime/run()`` returned.
    var hasEnded: Bool { state.withLock { $0.ended } }

    /// Fake time from ``Runtime/stop()`` to the runtime's end, once ``run(_:)`` stopped it.
    var shutdownTook: Duration? { state.withLock { $0.shutdownTook } }

    /// Runs `body` with the runtime running (settled before `body` starts); then stops it and
    /// waits for its end, moving the fake clock on for at most ``stopTimeout``. A runtime that
    /// does not end is a recorded issue (and a thrown ``HarnessTimeout``).
    func run(sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async throws {
        let task = Task(executorPreference: executor) {
            await self.runtime.run()
            self.state.withLock { $0.ended = true }
        }
        var failure: (any Error)?
        do {
            try await settle(sourceLocation: sourceLocation)
            try await body()
        } catch {
            failure = error
        }
        let ended = await stop(task, sourceLocation: sourceLocation)
        if let failure { throw failure }
        if !ended { throw HarnessTimeout() }
    }

    /// Stops the runtime; true when it ended within ``stopTimeout`` of fake time.
    private func stop(_ task: Task<Void, Never>, sourceLocation: SourceLocation) async -> Bool {
        runtime.stop()
        let stoppedAt = clock.now
        let limit = stoppedAt.advanced(by: Self.stopTimeout)
        do {
            try await settle(sourceLocation: sourceLocation)
            while !hasEnded && clock.now < limit {
                try await advance(.milliseconds(100), sourceLocation: sourceLocation)
            }
        } catch {
            // The settle recorded the issue; cancel below.
        }
        let ended = hasEnded
        if ended {
            state.withLock { $0.shutdownTook = stoppedAt.duration(to: clock.now) }
            await task.value
        } else {
            Issue.record(
                "the runtime did not end within \(Self.stopTimeout) (fake time) of stop: \(loopsDescription)",
                sourceLocation: sourceLocation)
            task.cancel()
            // Cancelled, it must end at once; if not, leave it rather than hang the test run.
            if await executor.waitUntilIdle(timeout: Self.settleTimeout), hasEnded { await task.value }
        }
        reportEscapes(sourceLocation)
        return ended
    }

    /// Waits until the runtime is idle: no job of it queued or running (``RuntimeExecutor``).
    /// Records an issue and throws ``HarnessTimeout`` when that takes ``settleTimeout`` of real time.
    func settle(sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let idle = await executor.waitUntilIdle(timeout: Self.settleTimeout)
        reportEscapes(sourceLocation)
        guard idle else {
            Issue.record(
                "the runtime did not go idle within \(Self.settleTimeout) of real time (\(executor.pending) jobs pending; \(loopsDescription))",
                sourceLocation: sourceLocation)
            throw HarnessTimeout()
        }
    }

    /// Polls `condition` whenever the runtime is idle, moving the fake clock on by `step` between
    /// polls (``advance(_:sourceLocation:)``), until it holds (at most 4,000 polls: 200 s of fake
    /// time at the default step). Records an issue and throws when it never holds.
    func eventually(
        _ what: String, step: Duration = .milliseconds(50), sourceLocation: SourceLocation = #_sourceLocation,
        _ condition: () -> Bool
    ) async throws {
        for _ in 0..<4000 {
            try await settle(sourceLocation: sourceLocation)
            if condition() { return }
            try await advance(step, sourceLocation: sourceLocation)
        }
        Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
        throw HarnessTimeout()
    }

    /// Lets the runtime run for `duration` of fake time: the clock moves to each deadline due
    /// within it in turn, and the runtime settles at each and at the end.
    func advance(_ duration: Duration, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let target = clock.now.advanced(by: duration)
        try await settle(sourceLocation: sourceLocation)
        while let next = clock.nextDeadline, next <= target {
            clock.advance(to: next)
            try await settle(sourceLocation: sourceLocation)
        }
        clock.advance(to: target)
        try await settle(sourceLocation: sourceLocation)
    }

    /// The runtime's loops (the supervisor's and each session's) and how many of them are parked
    /// in their mailbox (``Mailbox/isReceiverParked``).
    var loops: (parked: Int, total: Int) {
        let parked = [runtime.supervisorMailbox.isReceiverParked] + runtime.context.registry.all.map(\.mailbox.isReceiverParked)
        return (parked.filter { $0 }.count, parked.count)
    }

    private var loopsDescription: String {
        let loops = self.loops
        return "\(loops.parked) of \(loops.total) loops parked, \(clock.sleeperCount) sleepers, \(central.heldCount) held calls"
    }

    /// Records runtime work that ran off ``executor`` (the idle check could not see it).
    private func reportEscapes(_ sourceLocation: SourceLocation) {
        let escapes = executor.escapes
        let new = state.withLock { s -> ArraySlice<String> in
            defer { s.escapesReported = escapes.count }
            return escapes.dropFirst(s.escapesReported)
        }
        guard !new.isEmpty else { return }
        Issue.record(
            "runtime work ran outside the harness's executor, so idleness is unknown: \(new.joined(separator: "; "))",
            sourceLocation: sourceLocation)
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

/// The lines a ``RuntimeHarness`` collected.
private final class LogSink: Sendable {
    let lines = Mutex<[String]>([])
}

/// Collects the runtime's log at `notice` and above into a ``LogSink``.
private struct CollectingLogHandler: LogHandler {
    let sink: LogSink
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .notice

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        guard event.level >= .notice else { return }
        sink.lines.withLock { $0.append("\(event.level) \(event.message)") }
    }
}
