import MQTT
import Synchronization

@testable import Bridge

/// An in-memory broker: records what the runtime publishes and subscribes to, delivers the
/// messages and connection events a test sends, and lets a test await a publish.
final class FakeBroker: MessageBroker {
    struct Published: Sendable {
        var message: MQTTMessage
        var text: String { String(decoding: message.payload, as: UTF8.self) }
    }

    private struct Waiter {
        var id: Int
        var matches: @Sendable (Published) -> Bool
        var continuation: CheckedContinuation<Published, any Error>
    }

    private struct State {
        var log: [Published] = []
        var subscriptions: [String] = []
        var connected = false
        var waiters: [Waiter] = []
        var nextWaiter = 0
    }

    private let state = Mutex(State())
    let messages: AsyncStream<MQTTMessage>
    let events: AsyncStream<MQTTConnectionEvent>
    private let messageInput: AsyncStream<MQTTMessage>.Continuation
    private let eventInput: AsyncStream<MQTTConnectionEvent>.Continuation

    init() {
        (messages, messageInput) = AsyncStream.makeStream()
        (events, eventInput) = AsyncStream.makeStream()
    }

    // MARK: MessageBroker

    func publish(_ message: MQTTMessage) -> MQTTError? {
        let published = Published(message: message)
        let woken = state.withLock { s -> [CheckedContinuation<Published, any Error>] in
            s.log.append(published)
            let due = s.waiters.filter { $0.matches(published) }
            s.waiters.removeAll { $0.matches(published) }
            return due.map(\.continuation)
        }
        for continuation in woken { continuation.resume(returning: published) }
        return nil
    }

    func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool) -> MQTTError? {
        publish(MQTTMessage(topic: topic, payload: payload, qos: qos, retain: retain, responseTopic: nil, correlationData: nil))
    }

    func subscribe(_ filter: String, qos: Int) {
        state.withLock { $0.subscriptions.append(filter) }
    }

    var isConnected: Bool { state.withLock { $0.connected } }

    // MARK: What a test does as the broker

    /// The broker accepts the connection: ``isConnected`` and a `connected` event.
    func connect() {
        state.withLock { $0.connected = true }
        eventInput.yield(.connected)
    }

    /// The connection ends: a `disconnected` event.
    func disconnect(reason: String = "test") {
        state.withLock { $0.connected = false }
        eventInput.yield(.disconnected(reason: reason))
    }

    /// Delivers a message of a subscription.
    func deliver(_ topic: String, _ text: String, responseTopic: String? = nil, correlationData: [UInt8]? = nil) {
        messageInput.yield(MQTTMessage(
            topic: topic, payload: Array(text.utf8), qos: 1, retain: false, responseTopic: responseTopic,
            correlationData: correlationData))
    }

    // MARK: What a test checks

    var all: [Published] { state.withLock { $0.log } }

    /// The filters subscribed to, in order.
    var subscriptions: [String] { state.withLock { $0.subscriptions } }

    /// Payloads published on `topic`, in order.
    func texts(_ topic: String) -> [String] {
        all.filter { $0.message.topic == topic }.map(\.text)
    }

    /// The last payload on `topic`.
    func last(_ topic: String) -> String? { texts(topic).last }

    /// How many messages were published so far: a mark for ``awaitPublish(on:after:where:)``.
    var mark: Int { state.withLock { $0.log.count } }

    /// Waits for a publish on `topic` whose text satisfies `matches`, the first after `mark`
    /// (published already or to come). Throws `CancellationError` when the task is cancelled (a
    /// test's time limit ends the wait).
    @discardableResult
    func awaitPublish(
        on topic: String, after mark: Int = 0, where matches: @escaping @Sendable (String) -> Bool = { _ in true }
    ) async throws -> Published {
        let wanted: @Sendable (Published) -> Bool = { $0.message.topic == topic && matches($0.text) }
        let id = state.withLock { s -> Int in
            s.nextWaiter += 1
            return s.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let found = state.withLock { s -> Result<Published, any Error>? in
                    if let p = s.log.dropFirst(mark).first(where: wanted) { return .success(p) }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    s.waiters.append(Waiter(id: id, matches: wanted, continuation: continuation))
                    return nil
                }
                if let found { continuation.resume(with: found) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> Waiter? in
                guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: i)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
