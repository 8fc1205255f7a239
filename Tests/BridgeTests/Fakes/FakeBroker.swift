import MQTT
import Synchronization

@testable import Bridge

/// Records what the runtime publishes.
final class FakeBroker: MessageBroker {
    struct Published: Sendable {
        var message: MQTTMessage
        var text: String { String(decoding: message.payload, as: UTF8.self) }
    }

    private let log = Mutex<[Published]>([])

    func publish(_ message: MQTTMessage) -> MQTTError? {
        log.withLock { $0.append(Published(message: message)) }
        return nil
    }

    func publish(topic: String, payload: [UInt8], qos: Int, retain: Bool) -> MQTTError? {
        publish(MQTTMessage(topic: topic, payload: payload, qos: qos, retain: retain, responseTopic: nil, correlationData: nil))
    }

    var all: [Published] { log.withLock { $0 } }

    /// Payloads published on `topic`, in order.
    func texts(_ topic: String) -> [String] {
        all.filter { $0.message.topic == topic }.map(\.text)
    }

    /// The last payload on `topic`.
    func last(_ topic: String) -> String? { texts(topic).last }
}
