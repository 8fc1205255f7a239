import BridgeCore
import Logging
import MQTT

/// Publishes the one result of every command (SPEC §4): on `…/result`, and with MQTT v5 on the
/// command's Response Topic with its Correlation Data.
struct CommandResponder: Sendable {
    var broker: any MessageBroker
    var logger: Logger

    func finish(_ p: PendingCommand, _ result: CommandResult) {
        let payload = result.jsonBytes
        if let error = result.error {
            logger.info("\(p.operation == .set ? "write" : "read") \(p.device)/\(p.service)/\(p.characteristic): \(error)")
        }
        if let e = broker.publish(topic: p.resultTopic, payload: payload, qos: 1, retain: false) {
            logger.warning("result for \(p.resultTopic) not sent: \(e)")
        }
        reply(to: p.message, payload)
    }

    /// Sends `payload` to the message's v5 Response Topic, if it has a valid one.
    func reply(to message: MQTTMessage, _ payload: [UInt8]) {
        guard let topic = message.responseTopic, !topic.isEmpty, TopicMapper.topicProblem(topic) == nil else { return }
        broker.publish(MQTTMessage(
            topic: topic, payload: payload, qos: 1, retain: false, responseTopic: nil,
            correlationData: message.correlationData))
    }

    /// The transaction a command carries (echoed in its result).
    static func transaction(of p: PendingCommand) -> JSONValue? {
        p.operation == .get
            ? ReadCommand.parse(p.message.payload).transaction
            : WriteCommand.parse(p.message.payload, format: .hex).transaction
    }

    /// Answers a command with an error.
    func fail(_ p: PendingCommand, _ error: CommandError) {
        finish(p, .failed(CommandResult.Operation(p.operation), error: error, transaction: Self.transaction(of: p)))
    }
}
