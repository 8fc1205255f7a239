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
    /// Per-entity configs of earlier versions cleared in this run.
    private var legacyCleared: Set<String> = []
    /// Until then device configs wait: the broker is still sending the retained per-entity
    /// configs of earlier versions, which must be cleared before a device config names the
    /// same entities (Home Assistant ignores a device config whose entities an old config holds).
    private(set) var holdUntil: BridgeInstant?
    private var held: Set<String> = []
    private var startedHolding = false
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

    /// How long device configs wait after the first broker connection.
    static let legacyWindow: Duration = .seconds(1)

    /// Publishes a peripheral's config if it changed, and schedules its values.
    mutating func publish(path: String, _ peripheral: HomeAssistantDiscovery.Peripheral, now: BridgeInstant) {
        let message = HomeAssistantDiscovery.deviceConfig(peripheral, bridge: bridge, topics: topics)
        if configs[path] == message { return }
        configs[path] = message
        removals.remove(message.topic)
        if let until = holdUntil, now < until {
            held.insert(path)
            return
        }
        broker.publish(topic: message.topic, payload: message.payload, qos: 1, retain: true)
        scheduleResend(devices: [peripheral.device], now: now)
    }

    /// A retained per-entity config of an earlier version: migrated, then cleared.
    ///
    /// Home Assistant's order, read in its MQTT discovery: `{"migrate_discovery": true}` on the
    /// old topic unloads the entity but keeps its registry entry; the empty retained message then
    /// finds nothing loaded (no removal, no warning); the device config, sent after the hold
    /// window, loads the entity again from its registry entry: same entity id, same settings.
    /// (Clearing first would delete the entity; clearing after the device config logs a
    /// conflicting-discovery warning.) The three messages share a discovery id, which Home
    /// Assistant processes one after the other.
    mutating func clearLegacy(topic: String) {
        guard legacyCleared.insert(topic).inserted else { return }
        logger.info("Home Assistant: migrating the per-entity discovery config of an earlier version: \(topic)")
        broker.publish(topic: topic, payload: Array(#"{"migrate_discovery": true}"#.utf8), qos: 1, retain: false)
        broker.publish(topic: topic, payload: [], qos: 1, retain: true)
    }

    /// Publishes the device configs held back during the window.
    mutating func releaseHeld(now: BridgeInstant) {
        guard let until = holdUntil, now >= until else { return }
        holdUntil = nil
        for path in held.sorted() {
            guard let message = configs[path] else { continue }
            broker.publish(topic: message.topic, payload: message.payload, qos: 1, retain: true)
        }
        if !held.isEmpty { scheduleResend(devices: nil, now: now) }
        held = []
    }

    /// Sends the bridge's config and every device config again (and pending removals); the last
    /// values follow ``resendDelay`` later.
    mutating func republish(reason: String, now: BridgeInstant) {
        if !startedHolding {
            // The first broker connection of the run: old configs arrive within the window;
            // device configs mapped before it wait for it as well.
            startedHolding = true
            holdUntil = now.advanced(by: Self.legacyWindow)
            held.formUnion(configs.keys)
        }
        for topic in removals where broker.publish(topic: topic, payload: [], qos: 1, retain: true) == nil {
            removals.remove(topic)
        }
        let bridgeConfig = HomeAssistantDiscovery.bridgeConfig(bridge, topics: topics)
        broker.publish(topic: bridgeConfig.topic, payload: bridgeConfig.payload, qos: 1, retain: true)
        for (path, message) in configs where !held.contains(path) {
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
