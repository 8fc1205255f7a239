/// Entities of a device with a profile (SPEC §15), from its ``DeviceProfileBinding``:
/// - a sensor or binary sensor per value the bound steps' decodes publish, reading
///   `{base}/{device}/values` (`{"profile": id, "values": {...}}`); a payload without a value
///   keeps the entity's state, since steps publish partial value sets. Device class and unit come
///   from the profile's `values:` declaration, else from the table of SPEC §7/§13 names;
/// - a `button` per command without parameters (`{}` to `{base}/{device}/command/{name}/set`);
/// - a `number` per command of one numeric parameter: min and max from its `parameters:`
///   declaration, else from its template's conversion and arithmetic;
/// - a `cover` from `cover:`: open, close and stop through the pseudo-command
///   `{base}/{device}/command/cover/set` (payloads `open`, `close`, `stop`, which the runtime runs
///   as the commands `cover:` names), the position through the position command, its state from
///   the values topic;
/// - a `climate` from `climate:`: the target temperature command and value, the mode command
///   and value, the range and step.
///
/// Commands and values the cover or the climate use get no entity of their own.
extension HomeAssistantEntities {
    /// The pseudo-command of a cover's open, close and stop (`{base}/{device}/command/cover/set`).
    static let coverCommand = "cover"
    /// The topic segment of named commands (SPEC §15).
    static let commandSegment = "command"
    /// HVAC modes Home Assistant's MQTT climate accepts.
    static let climateModes: Set<String> = ["auto", "off", "cool", "heat", "dry", "fan_only", "heat_cool"]

    /// `{base}/{device}/values`.
    var profileValuesTopic: String { "\(topics.prefix)\(peripheral.device)/values" }

    /// `{base}/{device}/command/{name}/set`.
    func commandTopic(_ name: String) -> String {
        topics.set(device: peripheral.device, service: Self.commandSegment, characteristic: name)
    }

    func profileComponents(_ binding: DeviceProfileBinding, into result: inout JSONObject) {
        let profile = binding.profile
        let cover = profile.cover
        let climate = profile.climate
        let shownElsewhere = Set([cover?.positionValue, climate?.temperatureValue, climate?.modeValue].compactMap { $0 })
        let values = Self.profileValues(binding)
        for (name, kind) in values where !shownElsewhere.contains(name) {
            let entityKind: ValueEntityKind
            switch kind {
            case .bool: entityKind = .bool
            case .number: entityKind = .number
            case .text: entityKind = .text
            }
            let (object, e) = valueEntity(
                key: name, kind: entityKind, topic: profileValuesTopic, objectPrefix: "val_", declared: profile.values[name])
            result.append(object, .object(e))
        }
        let claimed = Set(
            [cover?.open, cover?.close, cover?.stop, cover?.position, climate?.temperatureCommand, climate?.modeCommand]
                .compactMap { $0 })
        let numericValues = Set(values.filter { $0.kind == .number }.map(\.name))
        for command in binding.commands where !claimed.contains(command.name) {
            let parameters = command.parameterNames
            let object = "cmd_" + HomeAssistantDiscovery.sanitize(command.name)
            if parameters.isEmpty {
                var button = entity("button", object: object, name: Self.title(command.name))
                button.append("command_topic", .string(commandTopic(command.name)))
                button.append("payload_press", .string("{}"))
                result.append(object, .object(button))
            } else if parameters.count == 1, let (range, step) = Self.parameterRange(command, parameters[0]) {
                let parameter = parameters[0]
                var number = entity("number", object: object, name: Self.title(command.name))
                number.append("command_topic", .string(commandTopic(command.name)))
                number.append("command_template", .string("{\"\(parameter)\": {{ value }}}"))
                if let state = [command.name, parameter].first(where: numericValues.contains) {
                    number.append("state_topic", .string(profileValuesTopic))
                    number.append("value_template", .string(Self.stateTemplate(state)))
                }
                number.append("min", .number(range.lowerBound))
                number.append("max", .number(range.upperBound))
                number.append("step", .number(step))
                let unit = command.parameters[parameter]?.unit
                    ?? profile.values[parameter]?.unit ?? HomeAssistantSensorKind.named(parameter)?.unit
                if let unit { number.append("unit_of_measurement", .string(unit)) }
                result.append(object, .object(number))
            }
        }
        if let cover { result.append("cover", .object(coverEntity(cover, binding))) }
        if let climate { result.append("climate", .object(climateEntity(climate, binding))) }
    }

    /// The cover: the device's main entity (no name of its own).
    func coverEntity(_ cover: ProfileCover, _ binding: DeviceProfileBinding) -> JSONObject {
        var e = entity("cover", object: "cover", name: "Cover")
        e["name"] = .null
        if cover.open != nil || cover.close != nil || cover.stop != nil {
            e.append("command_topic", .string(commandTopic(Self.coverCommand)))
        }
        for (key, command, payload) in [
            ("payload_open", cover.open, "open"), ("payload_close", cover.close, "close"), ("payload_stop", cover.stop, "stop"),
        ] {
            e.append(key, command == nil ? .null : .string(payload))
        }
        if let position = cover.position {
            let parameter = binding.command(position)?.parameterNames.first ?? "position"
            e.append("set_position_topic", .string(commandTopic(position)))
            e.append("set_position_template", .string("{\"\(parameter)\": {{ position }}}"))
        }
        if let value = cover.positionValue {
            let quoted = "'" + Self.jinjaEscaped(value) + "'"
            e.append("position_topic", .string(profileValuesTopic))
            // An empty rendering is ignored: a payload without the position keeps it.
            e.append(
                "position_template",
                .string(Self.valuesPrefix + "{% if \(quoted) in v and v[\(quoted)] is number %}{{ v[\(quoted)] }}{% endif %}"))
        } else if cover.position != nil {
            e.append("optimistic", .bool(true))
        }
        return e
    }

    /// The thermostat: the device's main entity (no name of its own).
    func climateEntity(_ climate: ProfileClimate, _ binding: DeviceProfileBinding) -> JSONObject {
        var e = entity("climate", object: "climate", name: "Climate")
        e["name"] = .null
        let temperature = binding.command(climate.temperatureCommand)?.parameterNames.first ?? "temperature"
        e.append("temperature_command_topic", .string(commandTopic(climate.temperatureCommand)))
        e.append("temperature_command_template", .string("{\"\(temperature)\": {{ value }}}"))
        if let value = climate.temperatureValue {
            e.append("temperature_state_topic", .string(profileValuesTopic))
            e.append("temperature_state_template", .string(Self.stateTemplate(value)))
        }
        if let mode = climate.modeCommand {
            let modes = climate.modes.filter(Self.climateModes.contains)
            let parameter = binding.command(mode)?.parameterNames.first ?? "mode"
            e.append("modes", .array(modes.map { .string($0) }))
            e.append("mode_command_topic", .string(commandTopic(mode)))
            e.append("mode_command_template", .string("{\"\(parameter)\": \"{{ value }}\"}"))
            if let value = climate.modeValue {
                let quoted = "'" + Self.jinjaEscaped(value) + "'"
                let list = modes.map { "'\($0)'" }.joined(separator: ", ")
                e.append("mode_state_topic", .string(profileValuesTopic))
                e.append(
                    "mode_state_template",
                    .string(
                        Self.valuesPrefix + "{% if \(quoted) in v and v[\(quoted)] in [\(list)] %}{{ v[\(quoted)] }}"
                            + "{% elif this.state in [\(list)] %}{{ this.state }}{% else %}None{% endif %}"))
            }
        } else {
            // Only a target temperature: a heater that is always on.
            e.append("modes", .array([.string("heat")]))
        }
        e.append("min_temp", .number(climate.minTemperature))
        e.append("max_temp", .number(climate.maxTemperature))
        e.append("temp_step", .number(climate.temperatureStep))
        // Home Assistant's precisions are 0.1, 0.5 and 1.
        e.append("precision", .number([0.1, 0.5, 1].contains(climate.temperatureStep) ? climate.temperatureStep : 0.1))
        e.append("temperature_unit", .string("C"))
        return e
    }

    static let valuesPrefix = "{% set v = value_json.get('values', {}) if value_json is mapping else {} %}"

    /// A template of the numeric value `key`: the payload's when it has one, else nothing, which
    /// Home Assistant's number and climate ignore (a payload without the value keeps the state).
    /// Not the entity's own state as a fallback: that is `unavailable` while the device is
    /// offline, when a poll device's values come, and would clear the value.
    static func stateTemplate(_ key: String) -> String {
        let quoted = "'" + jinjaEscaped(key) + "'"
        return valuesPrefix + "{% if \(quoted) in v and v[\(quoted)] is number %}{{ v[\(quoted)] }}{% endif %}"
    }

    /// The values the bound steps' and commands' decodes publish, each once, in the order the
    /// steps name their decodes.
    static func profileValues(_ binding: DeviceProfileBinding) -> [(name: String, kind: ProfileValueKind)] {
        var decodes: [String] = []
        for step in binding.steps + binding.commands.flatMap(\.steps) {
            if let decode = step.decode, !decodes.contains(decode) { decodes.append(decode) }
        }
        var seen = Set<String>()
        var values: [(name: String, kind: ProfileValueKind)] = []
        for name in decodes {
            guard let decode = binding.profile.decodes[name] else { continue }
            for value in decode.valueKinds where seen.insert(value.name).inserted { values.append(value) }
        }
        return values
    }

    /// The range and step of a command's numeric `parameter`: the declared range, else the values
    /// its templates' conversions and arithmetic take; the declared step, else the one that gives
    /// whole results (`*2`: 0.5). `nil` when a template takes it as text (a CRC).
    static func parameterRange(_ command: ProfileCommand, _ parameter: String) -> (ClosedRange<Double>, Double)? {
        var low = -Double.infinity
        var high = Double.infinity
        var step = 0.0
        for case .write(_, let template, _) in command.steps.map(\.action) {
            for placeholder in template.placeholders where placeholder.source == .parameter(parameter) {
                let conversion = placeholder.conversion
                guard !conversion.isChecksum else { return nil }
                var ends = [Double(conversion.range.lowerBound), Double(conversion.range.upperBound)]
                var whole = 1.0
                if let a = placeholder.arithmetic {
                    let sign: Double = a.negate ? -1 : 1
                    ends = ends.map { sign * ($0 - Double(a.offset)) * Double(a.denominator) / Double(a.numerator) }
                    whole = Double(a.denominator) / Double(a.numerator)
                }
                step = max(step, whole)
                low = max(low, ends.min()!)
                high = min(high, ends.max()!)
            }
        }
        let declared = command.parameters[parameter]
        if let range = declared?.range {
            low = range.lowerBound
            high = range.upperBound
        }
        guard low.isFinite, high.isFinite, low <= high else { return nil }
        return (low...high, declared?.step ?? (step > 0 ? step : 1))
    }
}
