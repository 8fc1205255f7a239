import BridgeCore

/// An answer of the JSON API: an HTTP status and a JSON body.
public struct APIAnswer: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// The JSON body.
    public var body: String

    /// Creates an answer.
    public init(status: Int, body: String) {
        self.status = status
        self.body = body
    }

    /// `{"status": "error", "error": {"code", "message"}}` (plus the transaction, when there was one).
    public static func error(_ error: WebError, status: Int, transaction: String? = nil) -> APIAnswer {
        var object: JSONObject = [
            "status": "error", "data": .object([:]),
            "error": ["code": .string(error.code.rawValue), "message": .string(error.message)],
        ]
        if let transaction { object["transaction"] = .string(transaction) }
        return APIAnswer(status: status, body: JSONValue.object(object).jsonString)
    }
}

/// The page server's state and actions, without HTTP: what the broker said (``store``, ``hub``) and the requests
/// and commands sent to the bridges (``perform(_:)``).
public final class PageCore: Sendable {
    /// The settings.
    public let settings: WebSettings
    /// The last message of every page topic.
    public let store: MessageStore
    /// The live pages.
    public let hub: EventHub
    /// The requests waiting for their answers.
    public let waiters: TransactionWaiters
    /// Where requests are published.
    public let broker: any PageBroker

    /// Creates the core.
    public init(settings: WebSettings, broker: any PageBroker, waiters: TransactionWaiters = TransactionWaiters()) {
        self.settings = settings
        self.store = MessageStore(baseTopic: settings.baseTopic, capacity: settings.maxTopics)
        self.hub = EventHub(queueCapacity: settings.eventBuffer)
        self.waiters = waiters
        self.broker = broker
    }

    /// The filter the server subscribes to: `{base}/#`.
    public var subscription: String { settings.baseTopic + "/#" }

    /// A message from the broker: kept, sent to the live pages, and handed to the request waiting for it.
    public func receive(topic: String, payload: [UInt8]) {
        let text = String(decoding: payload, as: UTF8.self)
        guard store.apply(topic: topic, payload: text) else { return }
        hub.publish(topic: topic, payload: text)
        if TransactionWaiters.mayAnswer(topic: topic) {
            waiters.deliver(topic: topic, payload: text)
        }
    }

    /// `GET /api/snapshot`: `{"base", "cluster", "bridges", "messages": [{"topic", "payload"}]}`.
    public func snapshotJSON() -> [UInt8] {
        let messages = store.snapshot()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(messages.reduce(128) { $0 + $1.topic.utf8.count + $1.payload.utf8.count + 32 })
        bytes.append(contentsOf: "{\"base\":".utf8)
        JSONWriter.appendString(settings.baseTopic, to: &bytes)
        bytes.append(contentsOf: ",\"cluster\":".utf8)
        JSONWriter.appendBool(settings.cluster, to: &bytes)
        bytes.append(contentsOf: ",\"bridges\":[".utf8)
        for (index, id) in store.bridges.enumerated() {
            if index > 0 { bytes.append(0x2C) }
            JSONWriter.appendString(id, to: &bytes)
        }
        bytes.append(contentsOf: "],\"messages\":[".utf8)
        for (index, message) in messages.enumerated() {
            if index > 0 { bytes.append(0x2C) }
            bytes.append(contentsOf: "{\"topic\":".utf8)
            JSONWriter.appendString(message.topic, to: &bytes)
            bytes.append(contentsOf: ",\"payload\":".utf8)
            JSONWriter.appendString(message.payload, to: &bytes)
            bytes.append(0x7D)
        }
        bytes.append(contentsOf: "]}".utf8)
        return bytes
    }

    /// `POST /api/request` with a parsed body.
    public func request(_ body: JSONValue) async -> APIAnswer {
        let transaction = waiters.open()
        do throws(WebError) {
            let outbound = try PageOutbound.request(
                body, transaction: transaction, settings: settings, onlineBridges: store.onlineBridges)
            return await perform(outbound, transaction: transaction)
        } catch {
            waiters.discard(transaction)
            return .error(error, status: error.code == .noBridge ? 503 : 400)
        }
    }

    /// `POST /api/command` with a parsed body.
    public func command(_ body: JSONValue) async -> APIAnswer {
        let transaction = waiters.open()
        do throws(WebError) {
            let outbound = try PageOutbound.command(body, transaction: transaction, settings: settings)
            return await perform(outbound, transaction: transaction)
        } catch {
            waiters.discard(transaction)
            return .error(error, status: 400)
        }
    }

    /// Publishes and waits for the answer carrying `transaction`: 200 with the answer, 503 when nothing could be
    /// published, 504 after the timeout.
    func perform(_ outbound: PageOutbound, transaction: String) async -> APIAnswer {
        if let error = broker.publish(topic: outbound.topic, payload: JSONValue.object(outbound.payload).jsonBytes) {
            waiters.discard(transaction)
            return .error(error, status: 503, transaction: transaction)
        }
        guard let answer = await waiters.wait(for: transaction, timeout: outbound.timeout) else {
            let seconds = outbound.timeout.components.seconds
            return .error(
                WebError(.timeout, "no answer on \(outbound.answerTopic) within \(seconds) s"), status: 504,
                transaction: transaction)
        }
        return APIAnswer(status: 200, body: answer)
    }
}
