/// The entities of one peripheral, as the `components` of its device discovery config.
///
/// Per characteristic (Device Information strings go into the device block instead):
/// - readable or notifying: a `sensor` (kind from ``HomeAssistantSensorKind``), or, when it can
///   also be written, the `text` / `number` entity that shows its value and sets it;
/// - writable: a `button` when a fixed payload makes sense (`press`, 2A39 `01`), else `number`
///   for numeric formats and `text` (hex, or UTF-8 for `utf8`), all publishing to `/set`;
/// - readable: a refresh `button` publishing to `/get`.
///
/// Per device: a connectivity `binary_sensor` on its availability topic and an RSSI sensor read
/// from `{base}/bridge/health` (disabled by default). Templates turn a value whose bytes did not
/// fit its format (the payload's `value` is then hex text) into `None`, Home Assistant's
/// "unknown", so a numeric sensor never receives text.
struct HomeAssistantEntities {
    typealias Characteristic = HomeAssistantDiscovery.Characteristic
    let peripheral: HomeAssistantDiscovery.Peripheral
    let bridge: HomeAssistantDiscovery.Bridge
    let topics: TopicMapper

    /// The 2A39 control point's `01`: reset energy expended.
    static let heartRateControlPoint = BluetoothUUID(uuid16: 0x2A39)
    static let numericTemplate = "{{ value_json.value if value_json.value is number else None }}"

    func components() -> JSONObject {
        var result = JSONObject()
        // A profile device shows its profile's values and commands; its characteristics (whose
        // topics stay, SPEC §15) only when its entry names them: a raw write box for an AM43's
        // frame characteristic would only invite wrong frames.
        for c in peripheral.characteristics where !DeviceInformation.holds(c.uuid) && (peripheral.profile == nil || c.configured) {
            add(c, to: &result)
        }
        if let advertised = peripheral.advertised { advertisedComponents(advertised, into: &result) }
        if let profile = peripheral.profile { profileComponents(profile, into: &result) }
        var connectivity = entity("binary_sensor", object: "connectivity", name: "Connectivity")
        connectivity.append("device_class", .string("connectivity"))
        connectivity.append("entity_category", .string("diagnostic"))
        connectivity.append("state_topic", .string(topics.availability(device: peripheral.device)))
        connectivity.append("payload_on", .string("online"))
        connectivity.append("payload_off", .string("offline"))
        connectivity.append("availability", .array([.object(["topic": .string(topics.bridgeState)])]))
        result.append("connectivity", .object(connectivity))
        if peripheral.advertised != nil, let kind = HomeAssistantSensorKind.named("rssi") {
            // Every advertisement payload carries its RSSI.
            var rssi = entity("sensor", object: "rssi", name: kind.name)
            apply(kind, to: &rssi)
            rssi.append("state_topic", .string(topics.advertisement(device: peripheral.device)))
            rssi.append("value_template", .string("{{ value_json.rssi if value_json.rssi is number else None }}"))
            rssi.append("enabled_by_default", .bool(false))
            result.append("rssi", .object(rssi))
        } else if bridge.health, let kind = HomeAssistantSensorKind.named("rssi") {
            var rssi = entity("sensor", object: "rssi", name: kind.name)
            apply(kind, to: &rssi)
            rssi.append("state_topic", .string(topics.bridgeHealth))
            let key = Self.jinjaEscaped(peripheral.device)
            rssi.append(
                "value_template",
                .string(
                    "{% set d = value_json.devices['\(key)'] if value_json.devices is mapping and '\(key)' in value_json.devices else None %}"
                        + "{{ d.rssi if d is mapping and d.rssi is number else None }}"))
            rssi.append("enabled_by_default", .bool(false))
            result.append("rssi", .object(rssi))
        }
        return result
    }

    private func add(_ c: Characteristic, to result: inout JSONObject) {
        let object = HomeAssistantDiscovery.sanitize(c.service + "_" + c.characteristic)
        let kind = Self.kind(of: c)
        // A 128-bit UUID segment is named by its first 8 digits (`5e1f0002`), as tools show them.
        let segmentName = c.characteristic.count == 36 ? String(c.characteristic.prefix(8)) : c.characteristic
        // The peripheral's own name (0x2901) first; a presentation format names only what its unit says.
        let kindName = c.presentation == nil || kind?.deviceClass != nil ? kind?.name : nil
        let name = c.userDescription ?? kindName ?? segmentName
        // Entity ids name what the value is when the segment is only its SIG UUID (`sensor.env_temperature`);
        // described custom characteristics keep their UUID (two temperatures do not collide).
        let sigKey = c.uuid.uuid16 != nil && kind?.deviceClass != nil
        let idPart = (c.characteristic == c.uuid.shortForm && (c.presentation == nil || sigKey) ? kind?.key : nil)
            ?? c.characteristic
        let valueTopic = topics.value(device: peripheral.device, service: c.service, characteristic: c.characteristic)
        let setTopic = topics.set(device: peripheral.device, service: c.service, characteristic: c.characteristic)
        let observable = c.canRead || c.canNotify
        let press = c.press ?? (c.uuid == Self.heartRateControlPoint ? [0x01] : nil)
        if c.canWrite && press == nil && isNumeric(c.format) {
            var number = entity("number", object: object, name: name, entity: idPart)
            number.append("command_topic", .string(setTopic))
            number.append("command_template", .string("{\"value\": {{ value }}}"))
            if observable {
                number.append("state_topic", .string(valueTopic))
                number.append("value_template", .string(Self.numericTemplate))
            }
            let range = c.range ?? defaultRange(c.format)
            number.append("min", .number(range.lowerBound))
            number.append("max", .number(range.upperBound))
            number.append("step", .number(step(c.format)))
            number.append("mode", .string("box"))
            if let unit = kind?.unit { number.append("unit_of_measurement", .string(unit)) }
            result.append(object, .object(number))
        } else if c.canWrite && press == nil {
            var text = entity("text", object: object, name: name, entity: idPart)
            text.append("command_topic", .string(setTopic))
            if c.format == .utf8 {
                text.append("command_template", .string("{\"value\": {{ value | tojson }}}"))
            } else {
                text.append("command_template", .string("{\"raw\": \"{{ value }}\"}"))
                text.append("pattern", .string("^([0-9A-Fa-f]{2})*$"))
            }
            text.append("max", .integer(254))
            if observable {
                text.append("state_topic", .string(valueTopic))
                text.append(
                    "value_template",
                    .string(c.format == .utf8 ? "{{ value_json.value[:254] }}" : "{{ value_json.raw[:254] }}"))
            }
            result.append(object, .object(text))
        } else {
            if observable { result.append(object, .object(sensor(c, kind: kind, name: name, topic: valueTopic, id: idPart))) }
            if c.canWrite, let press {
                let title = c.uuid == Self.heartRateControlPoint && c.press == nil ? "Reset energy expended" : "Press \(name)"
                var button = entity("button", object: object + "_press", name: title)
                button.append("command_topic", .string(setTopic))
                button.append("payload_press", .string("{\"raw\": \"\(Hex.encode(press))\"}"))
                result.append(object + "_press", .object(button))
            }
        }
        if c.canRead {
            var refresh = entity("button", object: object + "_refresh", name: "Refresh \(name)")
            refresh.append(
                "command_topic",
                .string(topics.get(device: peripheral.device, service: c.service, characteristic: c.characteristic)))
            refresh.append("payload_press", .string("{}"))
            refresh.append("entity_category", .string("diagnostic"))
            result.append(object + "_refresh", .object(refresh))
        }
    }

    private func sensor(_ c: Characteristic, kind: HomeAssistantSensorKind?, name: String, topic: String, id: String)
        -> JSONObject
    {
        let object = HomeAssistantDiscovery.sanitize(c.service + "_" + c.characteristic)
        var sensor = entity("sensor", object: object, name: name, entity: id)
        sensor.append("state_topic", .string(topic))
        if let kind { apply(kind, to: &sensor) }
        if let presentation = c.presentation {
            sensor.append("value_template", .string(Self.template(presentation)))
            return sensor
        }
        switch c.format {
        case .heartRateMeasurement:
            sensor.append("value_template", .string("{{ value_json.value.bpm if value_json.value is mapping else None }}"))
            sensor.append("json_attributes_topic", .string(topic))
            sensor.append(
                "json_attributes_template", .string("{{ value_json.value | tojson if value_json.value is mapping else '{}' }}"))
        case .bodySensorLocation:
            let options = HomeAssistantSensorKind.bodySensorLocations
            let list = options.map { "'\($0)'" }.joined(separator: ", ")
            sensor.append(
                "value_template",
                .string(
                    "{% set o = [\(list)] %}{{ o[value_json.value] if value_json.value is number and 0 <= value_json.value < \(options.count) else None }}"
                ))
        case .utf8:
            sensor.append("value_template", .string("{{ value_json.value[:255] }}"))
        case .hex:
            sensor.append("value_template", .string("{{ value_json.raw[:255] }}"))
            if !(c.configured || c.canNotify) { sensor.append("enabled_by_default", .bool(false)) }
        default:
            sensor.append("value_template", .string(Self.numericTemplate))
        }
        return sensor
    }

    /// The sensor kind of a characteristic: by its presentation format when it has one (no kind
    /// for text and booleans), else by its format. A SIG characteristic whose presentation unit
    /// gives no device class (2A19 battery level says only "percentage") keeps its SIG kind.
    static func kind(of c: Characteristic) -> HomeAssistantSensorKind? {
        let sig = HomeAssistantSensorKind(format: c.format)
        guard let presentation = c.presentation else { return sig }
        let described = HomeAssistantSensorKind(presentation: presentation)
        if described?.deviceClass == nil, let sig, sig.deviceClass != nil, sig.unit != nil { return sig }
        return described
    }

    /// The `value_template` of a value decoded by a presentation format.
    static func template(_ presentation: PresentationFormat) -> String {
        if presentation.isNumeric { return numericTemplate }
        switch presentation.format {
        case .utf8s, .utf16s: return "{{ value_json.value[:255] }}"
        case .boolean: return "{{ value_json.value if value_json.value is boolean else None }}"
        default: return "{{ value_json.value | tojson }}"
        }
    }

    /// An entity's common keys; `entity`: the id's part after the device (default: `object`).
    func entity(_ platform: String, object: String, name: String, entity: String? = nil) -> JSONObject {
        var e = JSONObject()
        e.append("platform", .string(platform))
        e.append("unique_id", .string(peripheral.node + "_" + object))
        let id = HomeAssistantDiscovery.entityID(peripheral.device + "_" + (entity ?? object))
        e.append("default_entity_id", .string(platform + "." + id))
        e.append("name", .string(name))
        return e
    }

    func apply(_ kind: HomeAssistantSensorKind, to e: inout JSONObject) {
        if let v = kind.deviceClass { e.append("device_class", .string(v)) }
        if let v = kind.unit { e.append("unit_of_measurement", .string(v)) }
        if let v = kind.stateClass { e.append("state_class", .string(v)) }
        if let v = kind.entityCategory { e.append("entity_category", .string(v)) }
        if let v = kind.icon { e.append("icon", .string(v)) }
        if let v = kind.options { e.append("options", .array(v.map { .string($0) })) }
        if let v = kind.precision { e.append("suggested_display_precision", .integer(Int64(v))) }
    }

    private func isNumeric(_ format: ValueFormat) -> Bool {
        switch format {
        case .uint8, .uint16, .uint32, .sint8, .sint16, .sint32, .float32, .float64, .sfloat, .float, .batteryLevel,
            .temperature, .humidity:
            return true
        case .hex, .utf8, .heartRateMeasurement, .bodySensorLocation:
            return false
        }
    }

    private func defaultRange(_ format: ValueFormat) -> ClosedRange<Double> {
        switch format {
        case .uint8: return 0...255
        case .sint8: return -128...127
        case .uint16: return 0...65535
        case .sint16: return -32768...32767
        case .uint32: return 0...4_294_967_295
        case .sint32: return -2_147_483_648...2_147_483_647
        case .batteryLevel, .humidity: return 0...100
        case .temperature: return -273.15...327.67
        default: return -1_000_000...1_000_000
        }
    }

    private func step(_ format: ValueFormat) -> Double {
        switch format {
        case .uint8, .uint16, .uint32, .sint8, .sint16, .sint32, .batteryLevel: return 1
        case .temperature, .humidity: return 0.01
        default: return 0.001
        }
    }
}
