import Testing

@testable import BridgeCore

/// The presence payload and topic, and the tracker's Home Assistant discovery (SPEC §12).
@Suite struct PresencePublishingTests {
    static let topics = TopicMapper(baseTopic: "ble", discoveryPrefix: "ha")
    static let bridge = HomeAssistantDiscovery.Bridge(clientID: "house", version: "1.2.3")

    @Test func payloadCodec() throws {
        let home = PresencePayload(state: .home, rssi: -67, bridge: "kitchen", lastSeen: 1_700_000_000)
        #expect(String(decoding: home.jsonBytes, as: UTF8.self) == #"{"state":"home","rssi":-67,"bridge":"kitchen","last_seen":1700000000}"#)
        #expect(try PresencePayload(bytes: home.jsonBytes) == home)
        let away = PresencePayload(state: .notHome, rssi: nil, bridge: "hall", lastSeen: nil)
        #expect(String(decoding: away.jsonBytes, as: UTF8.self) == #"{"state":"not_home","rssi":null,"bridge":"hall","last_seen":null}"#)
        #expect(try PresencePayload(bytes: away.jsonBytes) == away)
        #expect(try PresencePayload.decodeRetained([]) == nil)
        // Extra members are ignored; malformed ones are refused.
        #expect(try PresencePayload(bytes: Array(#"{"state":"home","rssi":-1,"bridge":"a","last_seen":5,"x":1}"#.utf8)).rssi == -1)
        for bad in [
            #"{"state":"away","rssi":null,"bridge":"a","last_seen":null}"#,
            #"{"state":"home","rssi":"-1","bridge":"a","last_seen":null}"#,
            #"{"state":"home","rssi":null,"bridge":"A B","last_seen":null}"#,
            #"{"state":"home","rssi":null,"bridge":"a"}"#,
            #"["home"]"#, "home",
        ] {
            #expect(throws: ClusterPayloadError.self, "\(bad)") { try PresencePayload(bytes: Array(bad.utf8)) }
        }
    }

    @Test func topic() {
        #expect(Self.topics.presence(tracker: "alice_phone") == "ble/alice_phone/presence")
        #expect(TopicMapper(baseTopic: "home/ble").presence(tracker: "keys") == "home/ble/keys/presence")
    }

    static func config(_ tracker: BridgeConfig.Tracker) throws -> (topic: String, json: JSONValue) {
        let message = HomeAssistantDiscovery.trackerConfig(tracker, bridge: bridge, topics: topics)
        return (message.topic, try JSONParser.parse(message.payload))
    }

    @Test func deviceTrackerDiscovery() throws {
        let irk = try #require(IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b"))
        let (topic, json) = try Self.config(.init(name: "alice_phone", match: .irk(irk)))
        #expect(topic == "ha/device/ble_tracker_alice_phone/config")
        let device = try #require(json["device"])
        #expect(device["identifiers"]?.arrayValue?.compactMap(\.stringValue) == ["ble_tracker_alice_phone"])
        #expect(device["name"]?.stringValue == "alice_phone")
        #expect(device["model"]?.stringValue == "Presence tracker (IRK)")
        #expect(device["via_device"]?.stringValue == Self.bridge.node)
        #expect(device["connections"] == nil)  // its addresses change
        #expect(json["origin"]?["name"]?.stringValue == "ble-mqtt-bridge")
        #expect(json["availability"]?.arrayValue?.compactMap { $0["topic"]?.stringValue } == ["ble/bridge/state"])
        #expect(!json.jsonString.contains("ec0234"), "the key is a secret")

        let tracker = try #require(json["components"]?["presence"])
        #expect(tracker["platform"]?.stringValue == "device_tracker")
        #expect(tracker["unique_id"]?.stringValue == "ble_tracker_alice_phone_presence")
        #expect(tracker["default_entity_id"]?.stringValue == "device_tracker.alice_phone")
        #expect(tracker["name"]?.isNull == true)
        #expect(tracker["source_type"]?.stringValue == "bluetooth_le")
        #expect(tracker["state_topic"]?.stringValue == "ble/alice_phone/presence")
        #expect(tracker["value_template"]?.stringValue == "{{ value_json.state }}")
        #expect(tracker["payload_home"]?.stringValue == "home")
        #expect(tracker["payload_not_home"]?.stringValue == "not_home")
        #expect(tracker["json_attributes_topic"]?.stringValue == "ble/alice_phone/presence")
        #expect(tracker["json_attributes_template"]?.stringValue?.contains("'room': value_json.bridge") == true)
        #expect(tracker["enabled_by_default"] == nil)

        let rssi = try #require(json["components"]?["rssi"])
        #expect(rssi["platform"]?.stringValue == "sensor")
        #expect(rssi["unique_id"]?.stringValue == "ble_tracker_alice_phone_rssi")
        #expect(rssi["device_class"]?.stringValue == "signal_strength")
        #expect(rssi["unit_of_measurement"]?.stringValue == "dBm")
        #expect(rssi["entity_category"]?.stringValue == "diagnostic")
        #expect(rssi["state_topic"]?.stringValue == "ble/alice_phone/presence")
        #expect(rssi["value_template"]?.stringValue == "{{ value_json.rssi if value_json.rssi is number else None }}")
        #expect(rssi["enabled_by_default"]?.boolValue == false)
        #expect(json["components"]?.objectValue?.keys == ["presence", "rssi"])
    }

    @Test func addressAndBeaconTrackers() throws {
        let (_, byAddress) = try Self.config(.init(name: "tag", match: .address(BluetoothAddress("c0:ff:ee:00:00:09")!)))
        #expect(byAddress["device"]?["connections"]?.arrayValue?.first?.arrayValue?.compactMap(\.stringValue) == ["bluetooth", "C0:FF:EE:00:00:09"])
        #expect(byAddress["device"]?["model"]?.stringValue == "Presence tracker (address)")
        let identity = try #require(IBeacon.Identity("fda50693-a4e2-4fb1-afcf-c6eb07647825:1:2"))
        let (topic, beacon) = try Self.config(.init(name: "Keys 2", match: .iBeacon(identity)))
        #expect(topic == "ha/device/ble_tracker_Keys_2/config")
        #expect(beacon["components"]?["presence"]?["default_entity_id"]?.stringValue == "device_tracker.keys_2")
        #expect(beacon["device"]?["model"]?.stringValue == "Presence tracker (iBeacon)")
    }
}
