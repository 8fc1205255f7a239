/// Entities of an advertisement device (SPEC §7): one per decoded value name, all reading
/// `{base}/{device}/advertisement`.
///
/// Numbers are sensors (device class and unit from ``HomeAssistantSensorKind``, by name, with a
/// `_2` suffix ignored), booleans binary sensors, BTHome button and dimmer events `event`
/// entities, other text sensors. A packet need not carry every value (some devices alternate):
/// a value missing from a packet keeps the entity's state, it does not turn it unknown: numeric
/// and binary sensors render nothing, which Home Assistant ignores; text sensors (which would
/// take the empty text) render `this.state`.
extension HomeAssistantEntities {
    /// Event types of BTHome's button and dimmer events.
    static let eventTypes: [String: [String]] = [
        "button": ["press", "double_press", "triple_press", "long_press", "long_double_press", "long_triple_press", "hold_press"],
        "dimmer": ["rotate_left", "rotate_right"],
    ]

    /// Binary sensor names of SPEC §13 whose device class has another name: `opening` is a
    /// contact sensor (`door`: open / closed), `battery_low` the `battery` class (on: low).
    static let binaryDeviceClassNames: [String: String] = ["opening": "door", "battery_low": "battery"]

    /// The device class of a binary value `key` (with its `_2` suffix dropped: `base`), if any.
    static func binaryDeviceClass(_ key: String, base: String) -> String? {
        if let named = binaryDeviceClassNames[key] ?? binaryDeviceClassNames[base] { return named }
        return binaryDeviceClasses.contains(base) ? base : nil
    }

    /// Binary sensor names that are Home Assistant device classes as they are.
    static let binaryDeviceClasses: Set<String> = [
        "battery", "battery_charging", "carbon_monoxide", "cold", "connectivity", "door", "garage_door", "gas", "heat",
        "light", "lock", "moisture", "motion", "moving", "occupancy", "opening", "plug", "power", "presence", "problem",
        "running", "safety", "smoke", "sound", "tamper", "vibration", "window",
    ]

    /// How a decoded value is shown.
    enum ValueEntityKind {
        /// A `binary_sensor`.
        case bool
        /// An `event` (BTHome's button and dimmer).
        case event
        /// A numeric `sensor`.
        case number
        /// A text `sensor`.
        case text
    }

    func advertisedComponents(_ advertised: HomeAssistantDiscovery.Advertised, into result: inout JSONObject) {
        let topic = topics.advertisement(device: peripheral.device)
        for key in advertised.values.keys.sorted() {
            let kind: ValueEntityKind
            switch advertised.values[key]! {
            case .bool: kind = .bool
            case .string where Self.eventTypes[Self.baseName(key)] != nil: kind = .event
            case .integer, .number: kind = .number
            case .string: kind = .text
            default: continue  // objects and arrays (raw BTHome data) stay in the payload
            }
            let (object, e) = valueEntity(key: key, kind: kind, topic: topic, objectPrefix: "adv_")
            result.append(object, .object(e))
        }
    }

    /// The entity of value `key` of the `{"values": {...}}` payloads on `topic` (an
    /// advertisement's, a profile's), its object id `objectPrefix` + the key. A payload without
    /// the key keeps the entity's state. `declared`: a profile's own unit and device class for
    /// the name, which replace the table's.
    func valueEntity(
        key: String, kind: ValueEntityKind, topic: String, objectPrefix: String, declared: ProfileValueInfo? = nil
    ) -> (object: String, entity: JSONObject) {
        let base = Self.baseName(key)
        let object = objectPrefix + HomeAssistantDiscovery.sanitize(key)
        let quoted = "'" + Self.jinjaEscaped(key) + "'"
        let values = "{% set v = value_json.get('values', {}) if value_json is mapping else {} %}"
        switch kind {
        case .bool:
            var e = entity("binary_sensor", object: object, name: Self.title(key))
            e.append("state_topic", .string(topic))
            if let deviceClass = declared?.deviceClass ?? Self.binaryDeviceClass(key, base: base) {
                e.append("device_class", .string(deviceClass))
            }
            // Without the value: nothing (ignored). Not `this.state`: it is `unavailable` while the
            // device is offline, when a poll device's values come, and the next payload would clear it.
            e.append(
                "value_template",
                .string(values + "{% if \(quoted) in v %}{{ 'ON' if v[\(quoted)] else 'OFF' }}{% endif %}"))
            return (object, e)
        case .event:
            var e = entity("event", object: object, name: Self.title(key))
            e.append("state_topic", .string(topic))
            e.append("event_types", .array((Self.eventTypes[base] ?? []).map { .string($0) }))
            if base == "button" { e.append("device_class", .string("button")) }
            // Packets without the event render nothing, which Home Assistant ignores.
            e.append(
                "value_template",
                .string(
                    values + "{% if \(quoted) in v and v[\(quoted)] != 'none' %}"
                        + "{\"event_type\": \"{{ v[\(quoted)] }}\"}{% endif %}"))
            return (object, e)
        case .number, .text:
            // The row of the name itself (`pm2_5`), else of its base (`temperature_probe_2`).
            let exact = HomeAssistantSensorKind.named(key)
            let row = exact ?? HomeAssistantSensorKind.named(base)
            let name = exact?.name ?? row.map { key == base ? $0.name : $0.name + " " + key.dropFirst(base.count + 1) }
            var e = entity("sensor", object: object, name: name ?? Self.title(key))
            e.append("state_topic", .string(topic))
            let isNumber = kind == .number
            if let declared, isNumber {
                if let v = declared.deviceClass { e.append("device_class", .string(v)) }
                if let v = declared.unit { e.append("unit_of_measurement", .string(v)) }
                e.append("state_class", .string("measurement"))
            } else if let row, isNumber {
                apply(row, to: &e)
            } else if isNumber {
                e.append("state_class", .string("measurement"))
            }
            // A numeric sensor (one with a state class or unit) ignores an empty rendering, as
            // binary sensors do; a text sensor would take it, so it renders its own state, which a
            // payload sent while the device is offline (`unavailable`) still clears.
            let numericInHA = isNumber && (e["state_class"] != nil || e["unit_of_measurement"] != nil)
            let template =
                numericInHA
                ? "{% if \(quoted) in v and v[\(quoted)] is number %}{{ v[\(quoted)] }}{% endif %}"
                : "{% if \(quoted) in v %}{{ v[\(quoted)] }}"
                    + "{% elif this.state not in ['unknown', 'unavailable', None] %}{{ this.state }}{% else %}None{% endif %}"
            e.append("value_template", .string(values + template))
            return (object, e)
        }
    }

    /// `text` for a single-quoted Jinja string literal.
    static func jinjaEscaped(_ text: String) -> String {
        var out = ""
        for c in text {
            if c == "\\" || c == "'" { out.append("\\") }
            out.append(c)
        }
        return out
    }

    /// `button_2` → `button`: repeated objects of one kind are numbered from the second.
    static func baseName(_ key: String) -> String {
        guard let underscore = key.lastIndex(of: "_") else { return key }
        let suffix = key[key.index(after: underscore)...]
        guard !suffix.isEmpty, suffix.allSatisfy(\.isNumber), underscore > key.startIndex else { return key }
        return String(key[..<underscore])
    }

    /// `co2_2` → `Co2 2`.
    static func title(_ key: String) -> String {
        let words = key.split(separator: "_")
        guard let first = words.first else { return key }
        return ([first.prefix(1).uppercased() + first.dropFirst()] + words.dropFirst().map(String.init)).joined(separator: " ")
    }
}
