/// Home Assistant MQTT discovery (`homeassistant.discovery: true`): one retained `sensor`
/// config per characteristic whose value has a meaning beyond its bytes (a known SIG format or a
/// configured `format` other than `hex`), pointing at the bridge's own value topic.
///
/// Topic: `{prefix}/sensor/ble_{address}/{object}/config` with `{object}` the service and
/// characteristic segments (characters other than `[A-Za-z0-9_-]` replaced by `_`). The entity is
/// available while both `{base}/bridge/state` and `{base}/{device}/availability` say `online`.
public enum HomeAssistantDiscovery {
    /// What the discovery config needs to know about one characteristic.
    public struct Characteristic: Sendable, Hashable {
        /// The device's topic segment.
        public var device: String
        /// `AA:BB:CC:DD:EE:FF`.
        public var address: String
        /// The advertised name, if any.
        public var deviceName: String?
        /// The service's topic segment.
        public var service: String
        /// The characteristic's topic segment.
        public var characteristic: String
        /// Its UUID.
        public var uuid: BluetoothUUID
        /// The format its values are decoded with.
        public var format: ValueFormat

        /// Creates a description.
        public init(
            device: String, address: String, deviceName: String?, service: String, characteristic: String,
            uuid: BluetoothUUID, format: ValueFormat
        ) {
            self.device = device
            self.address = address
            self.deviceName = deviceName
            self.service = service
            self.characteristic = characteristic
            self.uuid = uuid
            self.format = format
        }
    }

    /// The discovery message of a characteristic: topic and retained payload; `nil` when the
    /// characteristic gets no entity (`hex` values).
    public static func config(for c: Characteristic, topics: TopicMapper) -> (topic: String, payload: [UInt8])? {
        guard c.format != .hex else { return nil }
        let addressHex = String(c.address.lowercased().filter { $0 != ":" })
        let node = "ble_" + addressHex
        let object = sanitize(c.service + "_" + c.characteristic)
        var payload = JSONObject()
        payload.append("name", .string(entityName(c)))
        payload.append("unique_id", .string("\(node)_\(object)"))
        payload.append("object_id", .string(sanitize("\(c.device)_\(c.characteristic)")))
        payload.append(
            "state_topic", .string(topics.value(device: c.device, service: c.service, characteristic: c.characteristic)))
        var template = "{{ value_json.value }}"
        switch c.format {
        case .batteryLevel:
            payload.append("device_class", .string("battery"))
            payload.append("unit_of_measurement", .string("%"))
            payload.append("state_class", .string("measurement"))
        case .temperature:
            payload.append("device_class", .string("temperature"))
            payload.append("unit_of_measurement", .string("°C"))
            payload.append("state_class", .string("measurement"))
        case .humidity:
            payload.append("device_class", .string("humidity"))
            payload.append("unit_of_measurement", .string("%"))
            payload.append("state_class", .string("measurement"))
        case .heartRateMeasurement:
            template = "{{ value_json.value.bpm }}"
            payload.append("unit_of_measurement", .string("bpm"))
            payload.append("icon", .string("mdi:heart-pulse"))
            payload.append("state_class", .string("measurement"))
        case .uint8, .uint16, .uint32, .sint8, .sint16, .sint32, .float32, .float64, .sfloat, .float:
            payload.append("state_class", .string("measurement"))
        case .utf8, .bodySensorLocation, .hex:
            break
        }
        payload.append("value_template", .string(template))
        payload.append("availability_mode", .string("all"))
        payload.append(
            "availability",
            .array([
                .object(["topic": .string(topics.bridgeState)]),
                .object(["topic": .string(topics.availability(device: c.device))]),
            ]))
        var device = JSONObject()
        device.append("identifiers", .array([.string(node)]))
        device.append("connections", .array([.array([.string("bluetooth"), .string(c.address.uppercased())])]))
        device.append("name", .string(c.deviceName ?? c.device))
        device.append("via_device", .string("ble-mqtt-bridge"))
        payload.append("device", .object(device))
        payload.append("origin", .object(["name": .string("ble-mqtt-bridge")]))
        return (
            topics.discoveryConfig(component: "sensor", nodeID: node, objectID: object),
            JSONValue.object(payload).jsonBytes
        )
    }

    /// The topic `{prefix}/status` on which Home Assistant announces `online` after a start:
    /// discovery configs are published again then.
    public static func statusTopic(_ topics: TopicMapper) -> String { "\(topics.discoveryPrefix)/status" }

    static func entityName(_ c: Characteristic) -> String {
        switch c.format {
        case .batteryLevel: return "Battery"
        case .temperature: return "Temperature"
        case .humidity: return "Humidity"
        case .heartRateMeasurement: return "Heart rate"
        case .bodySensorLocation: return "Body sensor location"
        default: return c.characteristic
        }
    }

    static func sanitize(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { s in
                    (s.isASCII && (s.properties.isAlphabetic || ("0"..."9").contains(s) || s == "_" || s == "-"))
                        ? s : "_"
                }))
    }
}
