import BlueZ
import BridgeCore
import Logging
import MQTT

#if canImport(Glibc)
import Glibc
#endif

/// Takes `/set` and `/get` commands from MQTT and answers every one with exactly one result.
///
/// Commands to one device run one at a time in arrival order (BlueZ answers `InProgress` to
/// overlapping GATT operations); commands to different devices run concurrently. Each device
/// has a bounded queue: a command that does not fit is answered `busy` at once.
final class CommandDispatcher: Sendable {
    struct Pending: Sendable {
        var message: MQTTMessage
        var device: String
        var service: String
        var characteristic: String
        var operation: CharacteristicOperation
        var resultTopic: String
        var deadline: ContinuousClock.Instant
    }

    private let topics: TopicMapper
    private let directory: DeviceDirectory
    private let bluez: BlueZClient
    private let mqtt: MQTTClient
    private let router: ValueRouter
    private let logger: Logger
    private let timeout: Duration
    private let capacity: Int
    private let queues: QueueTable
    private let onBridgeRequest: @Sendable (String, MQTTMessage) -> Void

    init(
        topics: TopicMapper, directory: DeviceDirectory, bluez: BlueZClient, mqtt: MQTTClient, router: ValueRouter,
        timeout: Duration, capacity: Int, logger: Logger,
        onBridgeRequest: @escaping @Sendable (String, MQTTMessage) -> Void
    ) {
        self.onBridgeRequest = onBridgeRequest
        self.topics = topics
        self.directory = directory
        self.bluez = bluez
        self.mqtt = mqtt
        self.router = router
        self.timeout = timeout
        self.capacity = max(1, capacity)
        self.logger = logger
        self.queues = QueueTable()
    }

    /// Handles one incoming message synchronously up to its enqueueing, so arrival order is kept.
    func handle(_ message: MQTTMessage) {
        let parsed = topics.parse(message.topic)
        if case .bridgeRequest(let command)? = parsed {
            onBridgeRequest(command, message)
            return
        }
        guard case .characteristic(let device, let service, let characteristic, let op)? = parsed
        else { return }
        let resultTopic = String(message.topic.dropLast(op == .set ? 4 : 4)) + "/result"
        let pending = Pending(
            message: message, device: device, service: service, characteristic: characteristic, operation: op,
            resultTopic: resultTopic, deadline: .now + timeout)
        guard directory.knows(segment: device) else {
            finish(pending, .failed(
                CommandResult.Operation(op),
                error: CommandError(.unknownCharacteristic, "no device '\(device)' is known to the bridge"),
                transaction: transaction(of: pending)))
            return
        }
        let queue = queues.queue(for: device, capacity: capacity)
        switch queue.enqueue(pending) {
        case .accepted(let startWorker):
            if startWorker {
                Task { await self.work(queue) }
            }
        case .overflow:
            finish(pending, .failed(
                CommandResult.Operation(op), error: .busy(capacity: capacity), transaction: transaction(of: pending)))
        }
    }

    private func transaction(of p: Pending) -> JSONValue? {
        p.operation == .get
            ? ReadCommand.parse(p.message.payload).transaction
            : WriteCommand.parse(p.message.payload, format: .hex).transaction
    }

    private func work(_ queue: DeviceQueue) async {
        while let p = queue.next() {
            let result = await execute(p)
            finish(p, result)
        }
    }

    private func execute(_ p: Pending) async -> CommandResult {
        let op = CommandResult.Operation(p.operation)
        // Parse first: a malformed command is answered at once, whatever the device does.
        var write: WriteCommand?
        var transaction: JSONValue?
        if p.operation == .get {
            transaction = ReadCommand.parse(p.message.payload).transaction
        } else {
            // The format is needed for bare payloads; look it up if the characteristic is known.
            let format = directory.characteristic(segment: p.device, service: p.service, characteristic: p.characteristic)?.format ?? .hex
            let parsed = WriteCommand.parse(p.message.payload, format: format)
            transaction = parsed.transaction
            switch parsed.result {
            case .failure(let e):
                return .failed(op, error: e, transaction: transaction)
            case .success(let w):
                write = w
            }
        }
        guard await directory.waitReady(segment: p.device, until: p.deadline) else {
            if directory.characteristic(segment: p.device, service: p.service, characteristic: p.characteristic) == nil,
               directory.isReady(segment: p.device) {
                return .failed(op, error: unknown(p), transaction: transaction)
            }
            return .failed(op, error: CommandError(
                .notConnected, "device '\(p.device)' is not connected (waited \(timeout))"), transaction: transaction)
        }
        guard let ch = directory.characteristic(segment: p.device, service: p.service, characteristic: p.characteristic)
        else {
            return .failed(op, error: unknown(p), transaction: transaction)
        }
        if var w = write {
            // Re-parse with the characteristic's own format when the first parse did not know it.
            if ch.format != .hex {
                let parsed = WriteCommand.parse(p.message.payload, format: ch.format)
                switch parsed.result {
                case .failure(let e): return .failed(op, error: e, transaction: transaction)
                case .success(let again): w = again
                }
            }
            let type: WriteType
            do {
                type = try WriteTypeDecision.writeType(
                    flags: ch.flags, response: w.response, configured: ch.writeTypes)
            } catch {
                return .failed(op, error: error, transaction: transaction, response: w.response)
            }
            do {
                try await bluez.writeValue(
                    characteristic: ch.path, value: w.bytes, type: type == .request ? .request : .command,
                    timeout: timeout)
                return .writeSucceeded(response: type.withResponse, transaction: transaction)
            } catch {
                return .failed(op, error: Self.map(error), transaction: transaction, response: type.withResponse)
            }
        } else {
            do {
                try WriteTypeDecision.checkReadable(flags: ch.flags)
            } catch {
                return .failed(op, error: error, transaction: transaction)
            }
            do {
                let value = try await bluez.readValue(characteristic: ch.path, timeout: timeout)
                router.publishRead(path: ch.path, value: value)
                return .readSucceeded(raw: value, format: ch.format, transaction: transaction)
            } catch {
                return .failed(op, error: Self.map(error), transaction: transaction)
            }
        }
    }

    private func unknown(_ p: Pending) -> CommandError {
        CommandError(
            .unknownCharacteristic,
            "device '\(p.device)' has no characteristic '\(p.characteristic)' in service '\(p.service)'")
    }

    static func map(_ error: BlueZError) -> CommandError {
        switch error.code {
        case .timeout:
            return CommandError(.timeout, "BlueZ did not answer in time (\(error.name))")
        case .notConnected, .disconnected:
            return CommandError(.notConnected, "\(error.name): \(error.message)")
        default:
            return .gattError(name: error.name, message: error.message)
        }
    }

    private func finish(_ p: Pending, _ result: CommandResult) {
        let payload = result.jsonBytes
        if let error = result.error {
            logger.info("\(p.operation == .set ? "write" : "read") \(p.device)/\(p.service)/\(p.characteristic): \(error)")
        }
        if let e = mqtt.publish(topic: p.resultTopic, payload: payload, qos: 1) {
            logger.warning("result for \(p.resultTopic) not sent: \(e)")
        }
        if let responseTopic = p.message.responseTopic, !responseTopic.isEmpty, TopicMapper.topicProblem(responseTopic) == nil {
            _ = mqtt.publish(MQTTMessage(
                topic: responseTopic, payload: payload, qos: 1, retain: false, responseTopic: nil,
                correlationData: p.message.correlationData))
        }
    }
}

/// Per-device command queues.
final class QueueTable: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    private var queues: [String: DeviceQueue] = [:]
    init() { pthread_mutex_init(&mutex, nil) }
    deinit { pthread_mutex_destroy(&mutex) }

    func queue(for device: String, capacity: Int) -> DeviceQueue {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        if let q = queues[device] { return q }
        let q = DeviceQueue(capacity: capacity)
        queues[device] = q
        return q
    }
}

/// One device's FIFO of commands and whether a worker drains it.
final class DeviceQueue: @unchecked Sendable {
    enum Enqueued { case accepted(startWorker: Bool), overflow }

    private var mutex = pthread_mutex_t()
    private var queue: CommandQueue<CommandDispatcher.Pending, ContinuousClock.Instant>
    private var working = false

    init(capacity: Int) {
        queue = CommandQueue(capacity: capacity)
        pthread_mutex_init(&mutex, nil)
    }
    deinit { pthread_mutex_destroy(&mutex) }

    func enqueue(_ p: CommandDispatcher.Pending) -> Enqueued {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        switch queue.enqueue(p, deadline: p.deadline) {
        case .accepted:
            let start = !working
            working = true
            return .accepted(startWorker: start)
        default:
            return .overflow
        }
    }

    /// The next command, or nil (and the worker stops) when empty.
    func next() -> CommandDispatcher.Pending? {
        pthread_mutex_lock(&mutex)
        defer { pthread_mutex_unlock(&mutex) }
        if let e = queue.dequeue() { return e.element }
        working = false
        return nil
    }
}
