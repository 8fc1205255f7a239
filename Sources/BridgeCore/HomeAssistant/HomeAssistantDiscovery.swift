/// Home Assistant MQTT discovery (`homeassistant.discovery: true`), device-based: one retained
/// `{prefix}/device/{node}/config` per peripheral and one for the bridge itself, each with its
/// `device` block, the `origin`, and its entities under `components`.
///
/// - The bridge device (`node` from the MQTT client id, so two bridges on one broker stay two
///   devices) carries the bridge's version and a connectivity `binary_sensor` on
///   `{base}/bridge/state`; every peripheral is `via_device` it.
/// - A peripheral device (`node` `ble_{address hex}`) carries what its Device Information service
///   said and one entity per meaningful characteristic (``HomeAssistantEntities``).
///
/// Entity `unique_id`s of sensors are those of the per-entity configs earlier versions
/// published (`{node}_{service}_{characteristic}`), which ``legacyTopics(_:topics:)`` lists
/// for removal.
public enum HomeAssistantDiscovery {
    /// One discovery message: a retained topic and its payload.
    public struct Message: Sendable, Hashable {
        /// The config topic.
        public var topic: String
        /// The JSON payload (empty: remove).
        public var payload: [UInt8]
    }

    /// What discovery needs to know about one characteristic.
    public struct Characteristic: Sendable, Hashable {
        /// The service's topic segment.
        public var service: String
        /// The characteristic's topic segment.
        public var characteristic: String
        /// Its UUID.
        public var uuid: BluetoothUUID
        /// The format its values are decoded with.
        public var format: ValueFormat
        /// Whether it notifies or indicates.
        public var canNotify: Bool
        /// Whether it can be read.
        public var canRead: Bool
        /// Whether it can be written (Flags or `write_types`).
        public var canWrite: Bool
        /// Whether a `devices` entry names it (its entity is enabled even when only hex).
        public var configured: Bool
        /// `press`: the bytes a button writes; 2A39 (heart rate control point) defaults to `01`.
        public var press: [UInt8]?
        /// `min` / `max` of a `number` entity.
        public var range: ClosedRange<Double>?
        /// Its Presentation Format descriptor (0x2904) when no `format` is configured: values are
        /// decoded by it, its unit gives the entity's unit and device class.
        public var presentation: PresentationFormat?
        /// Its User Description (0x2901) when no `name` is configured: the entity's name.
        public var userDescription: String?

        /// Creates a description.
        public init(
            service: String, characteristic: String, uuid: BluetoothUUID, format: ValueFormat, canNotify: Bool,
            canRead: Bool, canWrite: Bool = false, configured: Bool = false, press: [UInt8]? = nil,
            range: ClosedRange<Double>? = nil, presentation: PresentationFormat? = nil, userDescription: String? = nil
        ) {
            self.presentation = presentation
            self.userDescription = userDescription
            self.service = service
            self.characteristic = characteristic
            self.uuid = uuid
            self.format = format
            self.canNotify = canNotify
            self.canRead = canRead
            self.canWrite = canWrite
            self.configured = configured
            self.press = press
            self.range = range
        }
    }

    /// What discovery needs to know about one peripheral.
    public struct Peripheral: Sendable, Hashable {
        /// Its topic segment.
        public var device: String
        /// `AA:BB:CC:DD:EE:FF`.
        public var address: String
        /// The advertised name, if any.
        public var name: String?
        /// What its Device Information service said.
        public var information: DeviceInformation
        /// Its mapped characteristics.
        public var characteristics: [Characteristic]
        /// For an advertisement device: what its advertisements decode to.
        public var advertised: Advertised?
        /// For a device with a profile (SPEC §15): the profile bound with the entry's options (its
        /// values, commands, cover and climate become entities; its maker and model name the device).
        public var profile: DeviceProfileBinding?

        /// Creates a description.
        public init(
            device: String, address: String, name: String?, information: DeviceInformation = DeviceInformation(),
            characteristics: [Characteristic], advertised: Advertised? = nil, profile: DeviceProfileBinding? = nil
        ) {
            self.profile = profile
            self.device = device
            self.address = address
            self.name = name
            self.information = information
            self.characteristics = characteristics
            self.advertised = advertised
        }

        /// `ble_{address hex}`: the device's node id and identifier.
        public var node: String { "ble_" + String(address.lowercased().filter { $0 != ":" }) }
    }

    /// What an advertisement device's packets decode to (SPEC §7): the decoder and every value
    /// name seen so far, with a sample value (its type picks the entity).
    public struct Advertised: Sendable, Hashable {
        /// `bthome_v2`, `pvvx`, `atc1441`, a family of SPEC §13 (`xiaomi`, `govee`, ...), or nil.
        public var decoder: String?
        /// Value name → a sample value.
        public var values: [String: JSONValue]
        /// The maker, as the payload's `manufacturer` says (SPEC §13).
        public var manufacturer: String?
        /// The model, as the payload's `model` says.
        public var model: String?

        /// Creates a description.
        public init(decoder: String?, values: [String: JSONValue], manufacturer: String? = nil, model: String? = nil) {
            self.decoder = decoder
            self.values = values
            self.manufacturer = manufacturer
            self.model = model
        }
    }

    /// The bridge as a Home Assistant device.
    public struct Bridge: Sendable, Hashable {
        /// The MQTT client id: unique per bridge on a broker.
        public var clientID: String
        /// The bridge's version.
        public var version: String
        /// Whether `{base}/bridge/health` is published (the RSSI sensors read it).
        public var health: Bool

        /// `homeassistant.support_url`: the configs' `origin.support_url`, left out when nil.
        public var supportURL: String?

        /// Creates a description.
        public init(clientID: String, version: String, health: Bool = true, supportURL: String? = nil) {
            self.clientID = clientID
            self.version = version
            self.health = health
            self.supportURL = supportURL
        }

        /// The bridge as `config` describes it (client id, health, support URL).
        public init(config: BridgeConfig, version: String) {
            self.init(
                clientID: config.mqtt.clientID, version: version, health: config.health.interval != nil,
                supportURL: config.homeAssistant.supportURL)
        }

        /// The bridge device's node id and identifier.
        public var node: String { "ble_mqtt_bridge_" + HomeAssistantDiscovery.sanitize(clientID) }
    }

    /// The topic `{prefix}/status` on which Home Assistant announces `online` after a start:
    /// configs, then the last values, are published again then.
    public static func statusTopic(_ topics: TopicMapper) -> String { "\(topics.discoveryPrefix)/status" }

    /// `{prefix}/device/{node}/config`.
    public static func deviceTopic(node: String, topics: TopicMapper) -> String {
        "\(topics.discoveryPrefix)/device/\(node)/config"
    }

    /// The bridge device's config: its connectivity sensor on `{base}/bridge/state`.
    public static func bridgeConfig(_ bridge: Bridge, topics: TopicMapper) -> Message {
        var device = JSONObject()
        device.append("identifiers", .array([.string(bridge.node)]))
        device.append("name", .string(bridge.clientID))
        device.append("manufacturer", .string("ble-mqtt-bridge"))
        device.append("model", .string("BLE to MQTT bridge"))
        device.append("sw_version", .string(bridge.version))
        var components = JSONObject()
        var state = JSONObject()
        state.append("platform", .string("binary_sensor"))
        state.append("unique_id", .string(bridge.node + "_connectivity"))
        state.append("default_entity_id", .string("binary_sensor." + entityID(bridge.node + "_connectivity")))
        state.append("name", .string("Connectivity"))
        state.append("device_class", .string("connectivity"))
        state.append("entity_category", .string("diagnostic"))
        state.append("state_topic", .string(topics.bridgeState))
        state.append("payload_on", .string("online"))
        state.append("payload_off", .string("offline"))
        components.append("connectivity", .object(state))
        return message(node: bridge.node, device: device, bridge: bridge, components: components, shared: nil, topics: topics)
    }

    /// A peripheral's config: its device block and every entity.
    public static func deviceConfig(_ p: Peripheral, bridge: Bridge, topics: TopicMapper) -> Message {
        let node = p.node
        var device = JSONObject()
        device.append("identifiers", .array([.string(node)]))
        device.append("connections", .array([.array([.string("bluetooth"), .string(p.address.uppercased())])]))
        device.append("name", .string(p.name ?? p.device))
        let info = p.information
        // A Device Information service's strings, else what the advertisements say (SPEC §13), else the profile's.
        if let v = info.manufacturer ?? p.advertised?.manufacturer ?? p.profile?.profile.manufacturer {
            device.append("manufacturer", .string(v))
        }
        if let v = info.model ?? p.advertised?.model ?? p.profile?.profile.model { device.append("model", .string(v)) }
        if let v = info.serial { device.append("serial_number", .string(v)) }
        if let v = info.hardware { device.append("hw_version", .string(v)) }
        if let v = info.softwareVersion { device.append("sw_version", .string(v)) }
        device.append("via_device", .string(bridge.node))
        var shared = JSONObject()
        shared.append("availability_mode", .string("all"))
        shared.append(
            "availability",
            .array([
                .object(["topic": .string(topics.bridgeState)]),
                .object(["topic": .string(topics.availability(device: p.device))]),
            ]))
        let components = HomeAssistantEntities(peripheral: p, bridge: bridge, topics: topics).components()
        return message(node: node, device: device, bridge: bridge, components: components, shared: shared, topics: topics)
    }

    /// The filter of the per-entity configs earlier versions published
    /// (`{prefix}/sensor/ble_{address hex}/{service}_{characteristic}/config`): subscribed to
    /// at start, so those still retained on the broker are cleared.
    public static func legacyFilter(_ topics: TopicMapper) -> String { "\(topics.discoveryPrefix)/sensor/+/+/config" }

    /// Whether `topic` is such a per-entity config of a peripheral (node `ble_` + 12 hex digits).
    public static func isLegacyTopic(_ topic: String, topics: TopicMapper) -> Bool {
        let prefix = topics.discoveryPrefix + "/sensor/"
        guard topic.hasPrefix(prefix), topic.hasSuffix("/config") else { return false }
        let parts = topic.dropFirst(prefix.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 16, parts[0].hasPrefix("ble_") else { return false }
        return parts[0].dropFirst(4).allSatisfy(\.isHexDigit) && !parts[1].isEmpty
    }

    static func message(
        node: String, device: JSONObject, bridge: Bridge, components: JSONObject, shared: JSONObject?, topics: TopicMapper
    ) -> Message {
        var payload = JSONObject()
        payload.append("device", .object(device))
        var origin = JSONObject()
        origin.append("name", .string("ble-mqtt-bridge"))
        origin.append("sw_version", .string(bridge.version))
        if let url = bridge.supportURL { origin.append("support_url", .string(url)) }
        payload.append("origin", .object(origin))
        if let shared { payload.members.append(contentsOf: shared.members) }
        payload.append("components", .object(components))
        return Message(topic: deviceTopic(node: node, topics: topics), payload: JSONValue.object(payload).jsonBytes)
    }

    /// `[A-Za-z0-9_-]`, everything else `_` (discovery topic and object ids).
    public static func sanitize(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { s in
                    (s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "_" || s == "-"))
                        ? s : "_"
                }))
    }

    /// An entity id's object part: lowercase `[a-z0-9_]`.
    static func entityID(_ text: String) -> String {
        String(sanitize(text).lowercased().map { $0 == "-" ? "_" : $0 })
    }
}
