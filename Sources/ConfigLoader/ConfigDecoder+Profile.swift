import BridgeCore
import YAMLKit

/// A profile file (SPEC §15) into a ``DeviceProfile``: every key checked like `bridge.yaml`'s (an
/// unknown one is an error with a suggestion), every codec string compiled with its error at
/// `file:line:column` inside the YAML scalar, and every reference between sections checked at the
/// node that refers. Steps are in ConfigDecoder+ProfileSteps.swift, decodes in
/// ConfigDecoder+ProfileDecodes.swift, commands in ConfigDecoder+ProfileCommands.swift.
extension ConfigDecoder {
    /// What a section of a profile may refer to, filled in file order.
    struct ProfileScope {
        var options: [String: DeviceProfile.Option] = [:]
        var values: [String: ProfileValueInfo] = [:]
        var decodes: [String: ProfileDecode] = [:]
        /// The characteristics a `subscribe` step before this point subscribes.
        var subscribed: Set<BluetoothUUID> = []
    }

    /// A mapping entry whose key is a name the file chooses (an option, a decode, a command, a field).
    struct NamedEntry {
        let name: String
        let key: Located
        let value: Located
    }

    /// The entries of a mapping of user-chosen names, in file order; keys are strings as written
    /// (`on` is "on"), each once.
    func namedEntries(_ value: Located) throws(ConfigError) -> [NamedEntry] {
        guard case .mapping(let mapping) = value.node else {
            throw error(
                .wrongType, "expected a mapping for '\(value.path)', found \(Self.kind(of: value.node))", at: value.mark)
        }
        var result: [NamedEntry] = []
        var seen: [String: Position?] = [:]
        for entry in mapping.entries {
            guard case .scalar(let scalar) = entry.key else {
                throw error(
                    .wrongType, "expected a string key in '\(value.path)', found \(Self.kind(of: entry.key))",
                    at: Position(entry.key.mark))
            }
            let path = value.path.isEmpty ? scalar.text : "\(value.path).\(scalar.text)"
            if let first = seen[scalar.text] {
                throw error(
                    .duplicateKey, "duplicate key '\(path)'\(first.map { " (first at line \($0.line))" } ?? "")",
                    at: Position(entry.key.mark))
            }
            seen[scalar.text] = Position(entry.key.mark)
            let key = Located(node: entry.key, path: path)
            result.append(NamedEntry(name: scalar.text, key: key, value: Located(node: entry.value, path: path, keyMark: key.mark)))
        }
        return result
    }

    /// A codec error (``ProfileCodecError``, its column 1-based in the string) at its place inside
    /// the YAML scalar `node`: one column more for the opening quote of a quoted scalar; the
    /// scalar's start for block scalars and text over several lines, where columns do not map.
    /// (An escape such as `\x41` in a double-quoted string shifts the columns after it: the text
    /// the codec sees is shorter than the source.)
    func codecError(_ codec: ProfileCodecError, in node: Located) -> ConfigError {
        var mark = node.mark
        if codec.column > 0, let base = mark, case .scalar(let scalar) = node.node, !scalar.text.contains("\n") {
            switch scalar.style {
            case .plain: mark = Position(line: base.line, column: base.column + codec.column - 1)
            case .singleQuoted, .doubleQuoted: mark = Position(line: base.line, column: base.column + codec.column)
            case .literal, .folded: break
            }
        }
        return error(.invalidValue, "\(node.path): \(codec.message)", at: mark)
    }

    /// A name that becomes a topic segment or a key (a command, an option, a decode).
    func profileName(_ entry: NamedEntry, _ what: String) throws(ConfigError) -> String {
        if let problem = TopicMapper.segmentProblem(entry.name) {
            throw error(.invalidName, "invalid \(what) name '\(entry.name)' in '\(entry.key.path)': \(problem)", at: entry.key.mark)
        }
        return entry.name
    }

    /// " (did you mean 'other'?)" for the closest of `known`, else `otherwise`.
    static func suggestion(for name: String, among known: [String], otherwise: String) -> String {
        KeySuggestion.closest(to: name, in: known).map { " (did you mean '\($0)'?)" } ?? otherwise
    }

    /// "unknown X 'name' (did you mean 'other'?)" or "(known: a, b)" or "(none declared)".
    func unknownName(_ what: String, _ name: String, among known: [String], at node: Located, hint: String = "") -> ConfigError {
        let otherwise = known.isEmpty ? " (none declared\(hint))" : " (known: \(known.sorted().joined(separator: ", "))\(hint))"
        return error(
            .invalidValue, "unknown \(what) '\(name)' in '\(node.path)'" + Self.suggestion(for: name, among: known, otherwise: otherwise),
            at: node.mark)
    }

    /// One profile file's root.
    func decodeProfile(_ root: Located) throws(ConfigError) -> DeviceProfile {
        guard !Self.isNull(root.node) else { throw error(.missingKey, "missing required key 'id'", at: nil) }
        let fields = try mapping(root, known: ConfigKeys.profile)
        guard let idNode = fields("id") else {
            throw error(.missingKey, "missing required key 'id' (the profile's name, such as xiaomi_miflora)", at: root.mark)
        }
        var profile = DeviceProfile(id: try segmentName(idNode), source: .file(fileName))
        if let node = fields("manufacturer") { profile.manufacturer = try nonEmptyString(node) }
        if let node = fields("model") { profile.model = try nonEmptyString(node) }
        if let node = fields("recognize") { profile.recognize = try decodeRecognize(node) }
        if let node = fields("connection") {
            let word = try string(node)
            guard let connection = DeviceProfile.Connection(rawValue: word) else {
                throw error(.invalidValue, "'\(node.path)' must be poll or always, not '\(word)'", at: node.mark)
            }
            profile.connection = connection
        }
        if let node = fields("interval") {
            guard profile.connection == .poll else {
                throw error(.ignoredSetting, "'interval' needs 'connection: poll' (this profile is 'always')", at: node.keyMark)
            }
            profile.interval = try duration(node, minimum: .seconds(1))
        } else if profile.connection == .poll {
            throw error(
                .missingKey, "'connection: poll' needs 'interval' (e.g. interval: 30m)",
                at: fields.entries["connection"]?.keyMark ?? root.mark)
        }
        var scope = ProfileScope()
        if let node = fields("options") { scope.options = try decodeProfileOptions(node) }
        if let node = fields("values") { scope.values = try decodeProfileValues(node) }
        if let node = fields("decode") { scope.decodes = try decodeProfileDecodes(node, scope: scope) }
        if let node = fields("steps") { profile.steps = try decodeProfileSteps(node, scope: &scope, parameters: false) }
        if let node = fields("commands") { profile.commands = try decodeProfileCommands(node, scope: scope) }
        profile.options = scope.options
        profile.values = scope.values
        profile.decodes = scope.decodes
        if let node = fields("cover") { profile.cover = try decodeProfileCover(node, profile: profile) }
        if let node = fields("climate") { profile.climate = try decodeProfileClimate(node, profile: profile) }
        return profile
    }

    func decodeRecognize(_ value: Located) throws(ConfigError) -> ProfileRecognize {
        let fields = try mapping(value, known: ConfigKeys.profileRecognize)
        var recognize = ProfileRecognize()
        if let node = fields("name") { recognize.name = NamePattern(try nonEmptyString(node)) }
        if let node = fields("service_data") { recognize.serviceData = try uuidList(node) }
        if let node = fields("services") { recognize.services = try uuidList(node) }
        return recognize
    }

    /// A list of UUIDs, each once (a single UUID reads as a list of one).
    func uuidList(_ value: Located) throws(ConfigError) -> [BluetoothUUID] {
        var result: [BluetoothUUID] = []
        let items: [Located]
        if case .scalar = value.node { items = [value] } else { items = try list(value) }
        for item in items {
            let uuid = try self.uuid(item)
            if !result.contains(uuid) { result.append(uuid) }
        }
        return result
    }

    /// `options: { password: { type: string, optional: true } }`.
    func decodeProfileOptions(_ value: Located) throws(ConfigError) -> [String: DeviceProfile.Option] {
        var options: [String: DeviceProfile.Option] = [:]
        for entry in try namedEntries(value) {
            let name = try profileName(entry, "option")
            var option = DeviceProfile.Option()
            if !Self.isNull(entry.value.node) {
                let fields = try mapping(entry.value, known: ConfigKeys.profileOption)
                if let node = fields("type") {
                    let text = try string(node)
                    guard let kind = DeviceProfile.Option.Kind(rawValue: text) else {
                        throw error(.invalidValue, "'\(node.path)' must be string or integer, not '\(text)'", at: node.mark)
                    }
                    option.kind = kind
                }
                if let node = fields("optional") { option.optional = try bool(node) }
            }
            options[name] = option
        }
        return options
    }

    /// `values: { radon_1day: { unit: "Bq/m³", device_class: ... } }`: value names beyond §7/§13's.
    func decodeProfileValues(_ value: Located) throws(ConfigError) -> [String: ProfileValueInfo] {
        var values: [String: ProfileValueInfo] = [:]
        for entry in try namedEntries(value) {
            let name = try profileName(entry, "value")
            var info = ProfileValueInfo()
            if !Self.isNull(entry.value.node) {
                let fields = try mapping(entry.value, known: ConfigKeys.profileValue)
                if let node = fields("unit") { info.unit = try nonEmptyString(node) }
                if let node = fields("device_class") { info.deviceClass = try nonEmptyString(node) }
            }
            values[name] = info
        }
        return values
    }

    /// A command name of `cover:` or `climate:`, which must exist, and take `parameter` when one
    /// is given (Home Assistant sends `{"position": N}`, `{"temperature": T}`, `{"mode": M}`).
    func commandReference(_ node: Located, profile: DeviceProfile, parameter: String? = nil) throws(ConfigError) -> String {
        let name = try string(node)
        guard let command = profile.command(name) else {
            throw unknownName("command", name, among: profile.commands.map(\.name), at: node)
        }
        if let parameter, !command.parameterNames.contains(parameter) {
            let used = command.parameterNames
            throw error(
                .invalidValue,
                "'\(node.path)': command '\(name)' must take the parameter '\(parameter)' in a template such as {\(parameter)|u8} "
                    + (used.isEmpty ? "(it takes none)" : "(it takes \(used.joined(separator: ", ")))"),
                at: node.mark)
        }
        return name
    }

    /// A value name of `cover:` or `climate:`, which one of the decodes must publish.
    func valueReference(_ node: Located, profile: DeviceProfile) throws(ConfigError) -> String {
        let name = try string(node)
        let decoded = Set(profile.decodes.values.flatMap(\.valueNames))
        guard decoded.contains(name) else {
            throw unknownName("value", name, among: Array(decoded), at: node, hint: "; a decode must name it")
        }
        return name
    }

    func decodeProfileCover(_ value: Located, profile: DeviceProfile) throws(ConfigError) -> ProfileCover {
        let fields = try mapping(value, known: ConfigKeys.profileCover)
        var cover = ProfileCover()
        if let node = fields("open") { cover.open = try commandReference(node, profile: profile) }
        if let node = fields("close") { cover.close = try commandReference(node, profile: profile) }
        if let node = fields("stop") { cover.stop = try commandReference(node, profile: profile) }
        if let node = fields("position") { cover.position = try commandReference(node, profile: profile, parameter: "position") }
        if let node = fields("position_value") { cover.positionValue = try valueReference(node, profile: profile) }
        return cover
    }

    func decodeProfileClimate(_ value: Located, profile: DeviceProfile) throws(ConfigError) -> ProfileClimate {
        let fields = try mapping(value, known: ConfigKeys.profileClimate)
        guard let commandNode = fields("temperature_command") else {
            throw error(.missingKey, "missing required key 'temperature_command' in '\(value.path)'", at: value.keyMark)
        }
        var climate = ProfileClimate(
            temperatureCommand: try commandReference(commandNode, profile: profile, parameter: "temperature"))
        if let node = fields("temperature_value") { climate.temperatureValue = try valueReference(node, profile: profile) }
        if let node = fields("mode_command") {
            climate.modeCommand = try commandReference(node, profile: profile, parameter: "mode")
        }
        if let node = fields("mode_value") { climate.modeValue = try valueReference(node, profile: profile) }
        if let node = fields("modes") {
            climate.modes = []
            for item in try list(node) { climate.modes.append(try nonEmptyString(item)) }
        }
        if let node = fields("min_temp") { climate.minTemperature = try number(node) }
        if let node = fields("max_temp") { climate.maxTemperature = try number(node) }
        guard climate.maxTemperature > climate.minTemperature else {
            let node = fields("max_temp") ?? fields("min_temp")!
            throw error(
                .invalidValue,
                "'\(value.path).max_temp' (\(climate.maxTemperature)) must be above 'min_temp' (\(climate.minTemperature))",
                at: node.mark)
        }
        if let node = fields("temp_step") {
            climate.temperatureStep = try number(node)
            guard climate.temperatureStep > 0 else {
                throw error(.invalidValue, "'\(node.path)' must be greater than zero", at: node.mark)
            }
        }
        return climate
    }
}
