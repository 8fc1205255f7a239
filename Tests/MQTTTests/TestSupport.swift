import BridgeBase
import Logging
import Synchronization
import Testing

@testable import MQTT

/// Thrown when something awaited in a test did not happen in time.
struct TimeoutError: Error, CustomStringConvertible {
    var description: String
}

/// Consumes an `AsyncStream` in the background and lets a test await its elements with a timeout.
actor StreamRecorder<Element: Sendable> {
    private var items: [Element] = []
    private var cursor = 0
    private var finished = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    /// Starts consuming `stream` (the stream's one consumer).
    static func start(_ stream: AsyncStream<Element>) -> StreamRecorder<Element> {
        let recorder = StreamRecorder<Element>()
        Task {
            for await element in stream {
                await recorder.append(element)
            }
            await recorder.finish()
        }
        return recorder
    }

    private func append(_ element: Element) {
        items.append(element)
        wakeAll()
    }

    private func finish() {
        finished = true
        wakeAll()
    }

    private func wakeAll() {
        let waiters = self.waiters
        self.waiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }

    /// Everything received so far.
    var all: [Element] { items }

    /// Whether the stream has finished.
    var isFinished: Bool { finished }

    /// Returns the next element (after those already returned) that satisfies `predicate`,
    /// skipping the others; throws ``TimeoutError`` after `timeout` or if the stream finishes.
    func next(
        timeout: Duration = .seconds(15),
        where predicate: @Sendable (Element) -> Bool = { _ in true }
    ) async throws -> Element {
        let deadline = ContinuousClock.now + timeout
        let timer = Task {
            try? await Task.sleep(until: deadline)
            self.wakeAll()
        }
        defer { timer.cancel() }
        while true {
            while cursor < items.count {
                let element = items[cursor]
                cursor += 1
                if predicate(element) { return element }
            }
            if finished {
                throw TimeoutError(description: "the stream finished before the expected element")
            }
            if ContinuousClock.now >= deadline {
                throw TimeoutError(description: "no expected element within \(timeout)")
            }
            await withCheckedContinuation { waiters.append($0) }
        }
    }

    /// Waits until the stream finishes; throws ``TimeoutError`` after `timeout`.
    func waitForFinish(timeout: Duration = .seconds(15)) async throws {
        let deadline = ContinuousClock.now + timeout
        let timer = Task {
            try? await Task.sleep(until: deadline)
            self.wakeAll()
        }
        defer { timer.cancel() }
        while !finished {
            if ContinuousClock.now >= deadline {
                throw TimeoutError(description: "the stream did not finish within \(timeout)")
            }
            await withCheckedContinuation { waiters.append($0) }
        }
    }
}

/// One log record captured by ``LogCapture``.
struct LogRecord: Sendable, CustomStringConvertible {
    var level: Logger.Level
    var message: String
    var description: String { "[\(level)] \(message)" }
}

/// A logger whose records a test can await and inspect.
struct LogCapture {
    let logger: Logger
    let records: StreamRecorder<LogRecord>

    init(label: String = "mqtt-test") {
        let (stream, continuation) = AsyncStream.makeStream(of: LogRecord.self)
        records = StreamRecorder.start(stream)
        logger = Logger(label: label) { _ in CapturingLogHandler(continuation: continuation) }
    }
}

private struct CapturingLogHandler: LogHandler {
    let continuation: AsyncStream<LogRecord>.Continuation
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        continuation.yield(LogRecord(level: event.level, message: event.message.description))
    }
}

/// A client on `broker` with recorders attached to its streams.
struct TestClient {
    let client: MQTTClient
    let messages: StreamRecorder<MQTTMessage>
    let events: StreamRecorder<MQTTConnectionEvent>
    let logs: StreamRecorder<LogRecord>

    init(_ configuration: MQTTConfiguration, loop: PollLoop? = nil) {
        let capture = LogCapture(label: "mqtt-test.\(configuration.clientID)")
        client = MQTTClient(configuration: configuration, logger: capture.logger, loop: loop)
        messages = StreamRecorder.start(client.messages)
        events = StreamRecorder.start(client.events)
        logs = capture.records
    }

    /// Starts the client and waits for its `.connected` event.
    static func connected(_ configuration: MQTTConfiguration, loop: PollLoop? = nil) async throws -> TestClient {
        let testClient = TestClient(configuration, loop: loop)
        testClient.client.start()
        try await testClient.expectConnected()
        return testClient
    }

    /// Disconnects; records an issue (instead of hanging the run) if that takes longer than
    /// `timeout` (it is bounded by about 4 s).
    func disconnect(within timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation)
        async
    {
        let client = self.client
        let finished = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                await client.disconnect()
                return true
            }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(finished, "disconnect() of \(client.configuration.clientID) did not return within \(timeout)",
            sourceLocation: sourceLocation)
    }

    /// Waits for the next `.connected` event.
    func expectConnected(timeout: Duration = .seconds(20)) async throws {
        _ = try await events.next(timeout: timeout) { $0 == .connected }
    }

    /// Waits for the next `.disconnected` event and returns its reason.
    func expectDisconnected(timeout: Duration = .seconds(20)) async throws -> String {
        let event = try await events.next(timeout: timeout) {
            if case .disconnected = $0 { return true }
            return false
        }
        guard case .disconnected(let reason) = event else { return "" }
        return reason
    }

    /// Proves the client's subscription covering `topic` is active on the broker: publishes a
    /// unique probe there and waits to receive it back (the broker handles one connection's
    /// packets in order, so a probe published after SUBSCRIBE comes back once it is in place).
    func confirmSubscription(topic: String) async throws {
        let probe = Array("probe-\(UInt64.random(in: 0...UInt64.max))".utf8)
        let error = client.publish(topic: topic, payload: probe, qos: 1)
        #expect(error == nil, "probe publish failed: \(String(describing: error))")
        _ = try await messages.next { $0.topic == topic && $0.payload == probe }
    }
}

/// A configuration for a test client on `broker` (fast reconnection).
func testConfiguration(
    _ broker: MosquittoBroker, clientID: String, version: MQTTConfiguration.ProtocolVersion = .v5
) throws -> MQTTConfiguration {
    var configuration = try MQTTConfiguration(url: broker.url, clientID: clientID)
    configuration.protocolVersion = version
    configuration.reconnectDelay = .milliseconds(100)
    configuration.maxReconnectDelay = .seconds(1)
    return configuration
}

/// A unique topic prefix per test.
func uniqueTopic(_ name: String) -> String {
    "test/\(name)/\(UInt32.random(in: 0...UInt32.max))"
}
