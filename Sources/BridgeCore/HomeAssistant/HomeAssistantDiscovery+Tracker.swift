/// Home Assistant discovery of a tracker (SPEC §12): one device per tracker, device-based like the peripherals, with
/// - a `device_tracker` (`source_type: bluetooth_le`) whose state is the presence payload's `state` (`home` /
///   `not_home`) and whose attributes are the room (`room`: the bridge that hears it best), `rssi` and `last_seen`;
/// - a `Signal strength` sensor on the same topic, disabled by default (it changes every 10 s while someone moves).
///
/// Both read the retained `{base}/{tracker}/presence`; they are unavailable while the bridge is offline.
extension HomeAssistantDiscovery {
    /// `ble_tracker_{name}`: a tracker's node id and device identifier (its name made a valid id: a tracker has no
    /// fixed address to name it by).
    public static func trackerNode(_ tracker: BridgeConfig.Tracker) -> String {
        "ble_tracker_" + sanitize(tracker.name)
    }

    /// The template that makes the room and the rest of the payload the tracker's attributes.
    static let trackerAttributesTemplate =
        "{{ {'room': value_json.bridge, 'rssi': value_json.rssi, 'last_seen': value_json.last_seen} | tojson }}"

    /// A tracker's config: its device block, the device tracker and the (disabled) RSSI sensor.
    public static func trackerConfig(_ tracker: BridgeConfig.Tracker, bridge: Bridge, topics: TopicMapper) -> Message {
        let node = trackerNode(tracker)
        let presence = topics.presence(tracker: tracker.name)
        var device = JSONObject()
        device.append("identifiers", .array([.string(node)]))
        if case .address(let address) = tracker.match {
            device.append("connections", .array([.array([.string("bluetooth"), .string(address.description)])]))
        }
        device.append("name", .string(tracker.name))
        device.append("model", .string(trackerModel(tracker.match)))
        device.append("via_device", .string(bridge.node))
        var shared = JSONObject()
        shared.append("availability", .array([.object(["topic": .string(topics.bridgeState)])]))

        var components = JSONObject()
        var tracking = JSONObject()
        tracking.append("platform", .string("device_tracker"))
        tracking.append("unique_id", .string(node + "_presence"))
        tracking.append("default_entity_id", .string("device_tracker." + entityID(tracker.name)))
        tracking.append("name", .null)  // the device's name
        tracking.append("source_type", .string("bluetooth_le"))
        tracking.append("state_topic", .string(presence))
        tracking.append("value_template", .string("{{ value_json.state }}"))
        tracking.append("payload_home", .string(PresencePayload.State.home.rawValue))
        tracking.append("payload_not_home", .string(PresencePayload.State.notHome.rawValue))
        tracking.append("json_attributes_topic", .string(presence))
        tracking.append("json_attributes_template", .string(trackerAttributesTemplate))
        components.append("presence", .object(tracking))

        var rssi = JSONObject()
        rssi.append("platform", .string("sensor"))
        rssi.append("unique_id", .string(node + "_rssi"))
        rssi.append("default_entity_id", .string("sensor." + entityID(tracker.name + "_rssi")))
        if let kind = HomeAssistantSensorKind.named("rssi") {
            rssi.append("name", .string(kind.name))
            if let v = kind.deviceClass { rssi.append("device_class", .string(v)) }
            if let v = kind.unit { rssi.append("unit_of_measurement", .string(v)) }
            if let v = kind.stateClass { rssi.append("state_class", .string(v)) }
            if let v = kind.entityCategory { rssi.append("entity_category", .string(v)) }
        }
        rssi.append("state_topic", .string(presence))
        rssi.append("value_template", .string("{{ value_json.rssi if value_json.rssi is number else None }}"))
        rssi.append("enabled_by_default", .bool(false))
        components.append("rssi", .object(rssi))
        return message(node: node, device: device, bridge: bridge, components: components, shared: shared, topics: topics)
    }

    /// What the device block calls the tracker: how it is recognised.
    static func trackerModel(_ match: BridgeConfig.Tracker.Match) -> String {
        switch match {
        case .address: return "Presence tracker (address)"
        case .iBeacon: return "Presence tracker (iBeacon)"
        case .irk: return "Presence tracker (IRK)"
        }
    }
}
