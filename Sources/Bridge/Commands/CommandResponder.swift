import BridgeCore
import RuntimeCore
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
        if let address = p.replyTo { reply(to: address, payload) }
    }

    /// Sends `payload` to the message's v5 Response Topic, if it has one.
    func reply(to message: MQTTMessage, _ payload: [UInt8]) {
        guard let address = Self.replyAddress(of: message) else { return }
        reply(to: address, payload)
    }

    /// Sends `payload` to a v5 Response Topic, if it is a valid topic.
    func reply(to address: ReplyAddress, _ payload: [UInt8]) {
        guard !address.topic.isEmpty, TopicMapper.topicProblem(address.topic) == nil else { return }
        broker.publish(MQTTMessage(
            topic: address.topic, payload: payload, qos: 1, retain: false, responseTopic: nil,
            correlationData: address.correlationData))
    }

    /// A message's v5 Response Topic and Correlation Data (nil without a Response Topic).
    static func replyAddress(of message: MQTTMessage) -> ReplyAddress? {
        message.responseTopic.map { ReplyAddress(topic: $0, correlationData: message.correlationData) }
    }

    /// Answers a command with an error.
    func fail(_ p: PendingCommand, _ error: CommandError) {
        finish(p, p.failure(error))
    }
}
