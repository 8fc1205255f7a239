import BridgeCore
import Logging

/// Home Assistant discovery (`homeassistant.discovery: true`): the bridge device's config and
/// one device config per mapped peripheral, retained; published again after every broker
/// (re)connection and when Home Assistant announces itself, removed on `forget`.
///
/// Values are not retained (SPEC §4), so an entity Home Assistant creates (or re-creates after
/// its restart) would stay `unknown` until the next notification, and for good for a value read
/// once. After publishing configs the publisher therefore asks for the last values to be sent
/// again, ``resendDelay`` later: Home Assistant subscribes an entity's state topic only once it
/// has processed the config.
struct HomeAssistantPublisher {
    /// How long after a config the last values are sent again.
    static let resendDelay: Duration = .seconds(2)

    let broker: any MessageBroker
    let topics: TopicMapper
    let logger: Logger
    let bridge: HomeAssistantDiscovery.Bridge
    /// Device configs by device object path.
    private var configs: [String: HomeAssistantDiscovery.Message] = [:]
    /// Nodes whose per-entity configs of earlier versions were cleared in this run.
    private var legacyCleared: Set<String> = []
    /// Configs of forgotten devices whose removal could not be sent (broker away).
    private var removals: Set<String> = []
    /// When the last values are sent again, and of which devices (`nil`: all).
    private(set) var resendAt: BridgeInstant?
    private var resendDevices: Set<String> = []
    private var resendAll = false

    init(broker: any MessageBroker, topics: TopicMapper, logger: Logger, bridge: HomeAssistantDiscovery.Bridge) {
        self.broker = broker
        self.topics = topics
        self.logger = logger
        self.bridge = bridge
    }

    /// Publishes a peripheral's config if it changed (the first time: after clearing the
    /// per-entity configs earlier versions published for it), and schedules its values.
    mutating func publish(path: String, _ peripheral: HomeAssistantDiscovery.Peripheral, now: BridgeInstant) {
        let message = HomeAssistantDiscovery.deviceConfig(peripheral, bridge: bridge, topics: topics)
        if configs[path] == message { return }
        if legacyCleared.insert(peripheral.node).inserted {
            for topic in HomeAssistantDiscovery.legacyTopics(peripheral, topics: topics) {
                broker.publish(topic: topic, payload: [], qos: 1, retain: true)
            }
        }
        configs[path] = message
        removals.remove(message.topic)
        broker.publish(topic: message.topic, payload: message.payload, qos: 1, retain: true)
        scheduleResend(devices: [peripheral.device], now: now)
    }

    /// Sends the bridge's config and every device config again (and pending removals); the last
    /// values follow ``resendDelay`` later.
    mutating func republish(reason: String, now: BridgeInstant) {
        for topic in removals where broker.publish(topic: topic, payload: [], qos: 1, retain: true) == nil {
            removals.remove(topic)
        }
        let bridgeConfig = HomeAssistantDiscovery.bridgeConfig(bridge, topics: topics)
        broker.publish(topic: bridgeConfig.topic, payload: bridgeConfig.payload, qos: 1, retain: true)
        for message in configs.values {
            broker.publish(topic: message.topic, payload: message.payload, qos: 1, retain: true)
        }
        logger.info("\(reason): published \(configs.count + 1) discovery configs; last values follow in \(Self.resendDelay)")
        scheduleResend(devices: nil, now: now)
    }

    /// Removes a forgotten device's entities (empty retained config).
    mutating func remove(path: String) {
        guard let message = configs.removeValue(forKey: path) else { return }
        if broker.publish(topic: message.topic, payload: [], qos: 1, retain: true) != nil {
            removals.insert(message.topic)
        }
    }

    /// The devices whose last values are due now (`all`: every device), clearing the schedule;
    /// `nil` when nothing is due.
    mutating func dueResend(now: BridgeInstant) -> (all: Bool, devices: Set<String>)? {
        guard let at = resendAt, at <= now else { return nil }
        defer {
            resendAt = nil
            resendAll = false
            resendDevices = []
        }
        return (resendAll, resendDevices)
    }

    private mutating func scheduleResend(devices: Set<String>?, now: BridgeInstant) {
        if let devices { resendDevices.formUnion(devices) } else { resendAll = true }
        resendAt = now.advanced(by: Self.resendDelay)
    }
}
