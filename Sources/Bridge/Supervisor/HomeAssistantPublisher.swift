import BridgeCore
import Logging

/// Home Assistant discovery configs: published (retained) when a device is mapped, again after
/// every broker (re)connection and when Home Assistant comes online, cleared on `forget`.
struct HomeAssistantPublisher {
    let broker: any MessageBroker
    let topics: TopicMapper
    let logger: Logger
    /// Retained configs per device path: topic → payload.
    private var configs: [String: [String: [UInt8]]] = [:]
    /// Configs of forgotten devices whose removal could not be sent (broker away).
    private var removals: Set<String> = []

    init(broker: any MessageBroker, topics: TopicMapper, logger: Logger) {
        self.broker = broker
        self.topics = topics
        self.logger = logger
    }

    /// Publishes the config of each characteristic that has one and changed.
    mutating func publish(path: String, _ list: [HomeAssistantDiscovery.Characteristic]) {
        for c in list {
            guard let (topic, payload) = HomeAssistantDiscovery.config(for: c, topics: topics) else { continue }
            if configs[path]?[topic] == payload { continue }
            configs[path, default: [:]][topic] = payload
            removals.remove(topic)
            broker.publish(topic: topic, payload: payload, qos: 1, retain: true)
        }
    }

    /// Sends every config again (and pending removals).
    mutating func republish(reason: String) {
        for topic in removals where broker.publish(topic: topic, payload: [], qos: 1, retain: true) == nil {
            removals.remove(topic)
        }
        var count = 0
        for (_, list) in configs {
            for (topic, payload) in list {
                broker.publish(topic: topic, payload: payload, qos: 1, retain: true)
                count += 1
            }
        }
        if count > 0 { logger.info("\(reason): published \(count) discovery configs again") }
    }

    /// Removes a forgotten device's entities (empty retained configs).
    mutating func remove(path: String) {
        guard let list = configs.removeValue(forKey: path) else { return }
        for topic in list.keys where broker.publish(topic: topic, payload: [], qos: 1, retain: true) != nil {
            removals.insert(topic)
        }
    }
}
