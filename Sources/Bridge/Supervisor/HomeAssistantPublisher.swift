import BridgeCore
import RuntimeCore
import Logging

/// Home Assistant discovery (`homeassistant.discovery: true`): the bridge device's config and
/// one device config per mapped peripheral, retained; published again after every broker
/// (re)connection and when Home Assistant announces itself, removed on `forget`.
///
/// Values are not retained (SPEC §4), so an entity Home Assistant creates (or re-creates after
/// its restart) would stay `unknown` until the next notification, and for good for a value read
/// once. After configs went out the last values are therefore sent again, ``HomeAssistantTiming/resendDelay`` later:
/// Home Assistant subscribes an entity's state topic only once it has processed the config.
/// An advertisement device's last packet too: its new entities would otherwise wait for the
/// device's next packet, minutes for some sensors (the one repeat of a packet the bridge makes;
/// BlueZ's repeats are never published, SPEC §7). When (that delay, the legacy window) is the
/// core's (``HomeAssistantSchedule``); this type only publishes.
struct HomeAssistantPublisher {
    let broker: any MessageBroker
    let topics: TopicMapper
    let logger: Logger
    let bridge: HomeAssistantDiscovery.Bridge
    /// Device configs by device object path.
    private var configs: [String: HomeAssistantDiscovery.Message] = [:]
    /// Per-entity configs of earlier versions cleared in this run.
    private var legacyCleared: Set<String> = []
    /// Device configs held back during the legacy window (``HomeAssistantSchedule``): the broker
    /// is still sending the retained per-entity configs of earlier versions, which must be cleared
    /// before a device config names the same entities (Home Assistant ignores a device config
    /// whose entities an old config holds).
    private var held: Set<String> = []
    /// Configs of forgotten devices whose removal could not be sent (broker away).
    private var removals: Set<String> = []
    /// The trackers (SPEC §12), each a device with a `device_tracker`, sent with the bridge's config.
    let trackers: [BridgeConfig.Tracker]
    /// Trackers another bridge of the cluster owns: their configs (naming that bridge) are its to send.
    var trackersServedElsewhere: Set<String> = []

    init(
        broker: any MessageBroker, topics: TopicMapper, logger: Logger, bridge: HomeAssistantDiscovery.Bridge,
        trackers: [BridgeConfig.Tracker] = []
    ) {
        self.broker = broker
        self.topics = topics
        self.logger = logger
        self.bridge = bridge
        self.trackers = trackers
    }

    /// Publishes a peripheral's config if it changed (or holds it back, `hold`); whether it was
    /// published (its values are then to follow).
    mutating func publish(path: String, _ peripheral: HomeAssistantDiscovery.Peripheral, hold: Bool) -> Bool {
        let message = HomeAssistantDiscovery.deviceConfig(peripheral, bridge: bridge, topics: topics)
        if configs[path] == message { return false }
        configs[path] = message
        removals.remove(message.topic)
        if hold {
            held.insert(path)
            return false
        }
        broker.publish(topic: message.topic, payload: message.payload, qos: 1, retain: true)
        return true
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

    /// Publishes the device configs held back during the window; whether there were any (every
    /// value is then to follow).
    mutating func releaseHeld() -> Bool {
        defer { held = [] }
        for path in held.sorted() {
            guard let message = configs[path] else { continue }
            broker.publish(topic: message.topic, payload: message.payload, qos: 1, retain: true)
        }
        return !held.isEmpty
    }

    /// Sends the bridge's config and every device config again (and pending removals); the
    /// device configs known so far are held instead when the window starts now (`startHold`).
    mutating func republish(reason: String, startHold: Bool) {
        if startHold { held.formUnion(configs.keys) }
        for topic in removals where broker.publish(topic: topic, payload: [], qos: 1, retain: true) == nil {
            removals.remove(topic)
        }
        let bridgeConfig = HomeAssistantDiscovery.bridgeConfig(bridge, topics: topics)
        broker.publish(topic: bridgeConfig.topic, payload: bridgeConfig.payload, qos: 1, retain: true)
        for (path, message) in configs where !held.contains(path) {
            broker.publish(topic: message.topic, payload: message.payload, qos: 1, retain: true)
        }
        var sent = configs.count + 1
        for tracker in trackers where !trackersServedElsewhere.contains(tracker.name) {
            publish(tracker: tracker)
            sent += 1
        }
        logger.info("\(reason): published \(sent) discovery configs; last values follow in \(HomeAssistantTiming.resendDelay)")
    }

    /// Publishes a tracker's config (its presence is retained: no value follows).
    func publish(tracker: BridgeConfig.Tracker) {
        let message = HomeAssistantDiscovery.trackerConfig(tracker, bridge: bridge, topics: topics)
        broker.publish(topic: message.topic, payload: message.payload, qos: 1, retain: true)
    }

    /// Forgets a device's config without touching the broker: in a cluster, another bridge serves it now and its
    /// config (naming that bridge) is the one that counts; this bridge must not send its own again (a republish
    /// when Home Assistant comes back) and must send it afresh if the device comes back here.
    mutating func forget(path: String) {
        configs[path] = nil
        held.remove(path)
    }

    /// Removes a forgotten device's entities (empty retained config).
    mutating func remove(path: String) {
        guard let message = configs.removeValue(forKey: path) else { return }
        if broker.publish(topic: message.topic, payload: [], qos: 1, retain: true) != nil {
            removals.insert(message.topic)
        }
    }
}
