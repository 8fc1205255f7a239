import BridgeCore
import Logging
import YAMLKit

/// Turns the composed YAML tree of `bridge.yaml` into a ``BridgeConfig``,
/// reporting every problem at the offending node.
struct ConfigDecoder {
    let fileName: String
    let environment: [String: String]
    let hostName: String
    /// Whether scalars expand `${VAR}` (`bridge.yaml`); profiles do not (their `${X}` stays text,
    /// secrets come through `profile_options`).
    var expandsVariables = true
    /// The profile catalog for a `profiles_dir` (nil: the default directory), called once before
    /// `devices` are decoded.
    var catalog: (_ directory: String?) throws(ConfigError) -> ProfileCatalog = { _ throws(ConfigError) in
        try ProfileCatalog.shipped()
    }
    /// The catalog `devices` refer to (set by ``decode(root:)``).
    var profiles: [String: DeviceProfile] = [:]
    /// Non-fatal findings, collected while decoding.
    var warnings: [ConfigError] = []
    /// Valid settings this version cannot act on yet (``BridgeConfig/unsupported``).
    var unsupported: [ConfigError] = []

    /// A 1-based line and column.
    struct Position: Equatable {
        var line: Int
        var column: Int

        init(line: Int, column: Int) {
            self.line = line
            self.column = column
        }

        init(_ mark: YAMLMark) {
            self.init(line: mark.line, column: mark.column)
        }
    }

    /// A node and its key path (`mqtt.tls.ca_file`, `devices[0].name`) for messages.
    struct Located {
        let node: YAMLNode
        let path: String
        /// The position to report for this node's value.
        let mark: Position?
        /// The position of the key this node is the value of (the node itself when none).
        let keyMark: Position?

        init(node: YAMLNode, path: String, keyMark: Position? = nil) {
            self.node = node
            self.path = path
            self.mark = Position(node.mark)
            self.keyMark = keyMark ?? Position(node.mark)
        }
    }

    /// The checked entries of a mapping.
    struct Fields {
        let path: String
        let mark: Position?
        var entries: [String: Located]

        /// The value of `key`, or `nil` when the key is absent or its value is null.
        func callAsFunction(_ key: String) -> Located? {
            guard let value = entries[key], !ConfigDecoder.isNull(value.node) else { return nil }
            return value
        }

        func qualified(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }
    }

    // MARK: - Errors

    func error(_ code: ConfigError.Code, _ message: String, at mark: Position?) -> ConfigError {
        ConfigError(code: code, file: fileName, line: mark?.line ?? 1, column: mark?.column ?? 1, message: message)
    }

    /// `invalid YAML: <libyaml's problem> (<context> at line L, column C)` at the problem.
    func yamlError(_ error: YAMLError, yaml: String) -> ConfigError {
        switch error.code {
        case .scanner, .parser, .composer:
            let message: String
            if error.problem == "but found another document" {
                message = "invalid YAML: the file must hold a single document (found a second one)"
            } else if let context = error.context {
                message =
                    "invalid YAML: \(error.problem) (\(context.text) at line \(context.mark.line), column \(context.mark.column))"
            } else {
                message = "invalid YAML: \(error.problem)"
            }
            return self.error(.yamlSyntax, message, at: error.mark.map(Position.init))
        case .reader:
            // The byte offset as a line and a column of Unicode scalars; 1:1 when the offset is
            // not at a character boundary.
            var line = 1
            var column = 1
            if let offset = error.offset,
                let index = yaml.utf8.index(yaml.utf8.startIndex, offsetBy: offset, limitedBy: yaml.utf8.endIndex)?
                    .samePosition(in: yaml)
            {
                for character in yaml[..<index] {
                    if character == "\n" || character == "\r\n" {
                        line += 1
                        column = 1
                    } else {
                        column += character.unicodeScalars.count
                    }
                }
            }
            return ConfigError(
                code: .yamlSyntax, file: fileName, line: line, column: column, message: "invalid YAML: \(error.problem)")
        case .memory:
            return self.error(.yamlSyntax, "invalid YAML: Memory error", at: nil)
        }
    }

    // MARK: - Node access

    static func isNull(_ node: YAMLNode) -> Bool {
        guard case .scalar(let scalar) = node, scalar.style == .plain else { return false }
        switch scalar.text {
        case "", "~", "null", "Null", "NULL": return true
        default: return false
        }
    }

    static func kind(of node: YAMLNode) -> String {
        switch node {
        case .scalar(let scalar): return isNull(node) ? "nothing" : "'\(scalar.text)'"
        case .mapping: return "a mapping"
        case .sequence: return "a list"
        }
    }

    func mapping(_ value: Located, known: [String]) throws(ConfigError) -> Fields {
        guard case .mapping(let mapping) = value.node else {
            throw error(
                .wrongType, "expected a mapping for '\(value.path)', found \(Self.kind(of: value.node))", at: value.mark)
        }
        var entries: [String: Located] = [:]
        for entry in mapping.entries {
            let keyNode = entry.key
            let valueNode = entry.value
            guard case .scalar(let keyScalar) = keyNode else {
                throw error(.wrongType, "expected a string key in '\(value.path)', found \(Self.kind(of: keyNode))", at: Position(keyNode.mark))
            }
            let key = keyScalar.text
            let path = value.path.isEmpty ? key : "\(value.path).\(key)"
            guard known.contains(key) else {
                let place = value.path.isEmpty ? "at the top level" : "in '\(value.path)'"
                var message = "unknown key '\(key)' \(place)"
                if let suggestion = KeySuggestion.closest(to: key, in: known) {
                    message += " (did you mean '\(suggestion)'?)"
                } else {
                    message += " (known keys: \(known.joined(separator: ", ")))"
                }
                throw error(.unknownKey, message, at: Position(keyNode.mark))
            }
            if let first = entries[key] {
                let firstLine = first.keyMark.map { " (first at line \($0.line))" } ?? ""
                throw error(.duplicateKey, "duplicate key '\(path)'\(firstLine)", at: Position(keyNode.mark))
            }
            entries[key] = Located(node: valueNode, path: path, keyMark: Position(keyNode.mark))
        }
        return Fields(path: value.path, mark: value.mark, entries: entries)
    }

    mutating func decode(root: YAMLNode?) throws(ConfigError) -> BridgeConfig {
        guard let root, !Self.isNull(root) else {
            throw error(.missingKey, "missing required key 'mqtt.url'", at: nil)
        }
        let fields = try mapping(Located(node: root, path: ""), known: ConfigKeys.topLevel)
        // Every section is decoded even when an earlier one failed: all errors are reported.
        var errors: [ConfigError] = []
        var mqtt: BridgeConfig.MQTT?
        if let mqttNode = fields("mqtt") {
            do { mqtt = try decodeMQTT(mqttNode) } catch { errors.append(error) }
        } else {
            errors.append(error(.missingKey, "missing required key 'mqtt.url'", at: fields.entries["mqtt"]?.keyMark ?? fields.mark))
        }
        var config = BridgeConfig(mqtt: mqtt ?? BridgeConfig.MQTT(url: BrokerURL(scheme: .mqtt, host: "invalid"), clientID: ""))
        do { if let node = fields("bluetooth") { config.bluetooth = try decodeBluetooth(node) } } catch { errors.append(error) }
        do { if let node = fields("state_file") { config.stateFile = try nonEmptyString(node) } } catch { errors.append(error) }
        do {
            if let node = fields("homeassistant") { config.homeAssistant = try decodeHomeAssistant(node) }
        } catch { errors.append(error) }
        do { if let node = fields("commands") { config.commands = try decodeCommands(node) } } catch { errors.append(error) }
        do { if let node = fields("reconnect") { config.reconnect = try decodeReconnect(node) } } catch { errors.append(error) }
        do { if let node = fields("health") { config.health = try decodeHealth(node) } } catch { errors.append(error) }
        do { if let node = fields("log_level") { config.logLevel = try decodeLogLevel(node) } } catch { errors.append(error) }
        decodeProfilesDir(fields("profiles_dir"), into: &config, errors: &errors)
        if let node = fields("devices") { config.devices = decodeDevices(node, errors: &errors) }
        config.bridgeID = BridgeID.derived(fromHostName: hostName)
        do { if let node = fields("bridge"), let id = try decodeBridge(node) { config.bridgeID = id } } catch { errors.append(error) }
        do { if let node = fields("cluster") { config.cluster = try decodeCluster(node) } } catch { errors.append(error) }
        do { if let node = fields("management") { config.management = try bool(node) } } catch { errors.append(error) }
        do { if let node = fields("devices_file") { config.devicesFile = try nonEmptyString(node) } } catch { errors.append(error) }
        do { if let node = fields("web") { config.web = try decodeWeb(node) } } catch { errors.append(error) }
        if let node = fields("trackers") { config.trackers = decodeTrackers(node, devices: config.devices, errors: &errors) }
        if var first = errors.first {
            first.further = Array(errors.dropFirst())
            throw first
        }
        // In a cluster every bridge needs its own client id, also several on one host (the broker drops a
        // connection whose id another client takes): without `client_id`, the bridge id names it.
        if config.cluster.enabled, fields("mqtt").flatMap({ try? mapping($0, known: ConfigKeys.mqtt)("client_id") }) == nil {
            config.mqtt.clientID = "ble-mqtt-bridge-\(config.bridgeID)"
        }
        config.warnings = warnings
        config.unsupported = unsupported
        return config
    }

    func decodeHealth(_ value: Located) throws(ConfigError) -> BridgeConfig.Health {
        let fields = try mapping(value, known: ConfigKeys.health)
        var health = BridgeConfig.Health()
        if let node = fields("metrics_file") { health.metricsFile = try nonEmptyString(node) }
        if let node = fields("interval") {
            let d = try duration(node, minimum: .zero)
            health.interval = d == .zero ? nil : max(d, .seconds(1))
        }
        return health
    }

    mutating func decodeMQTT(_ value: Located) throws(ConfigError) -> BridgeConfig.MQTT {
        let fields = try mapping(value, known: ConfigKeys.mqtt)
        guard let urlNode = fields("url") else {
            throw error(.missingKey, "missing required key 'url' in 'mqtt'", at: value.keyMark)
        }
        let urlText = try string(urlNode)
        let url: BrokerURL
        do {
            url = try BrokerURL(parsing: urlText)
        } catch {
            throw self.error(.invalidURL, error.message, at: urlNode.mark)
        }
        guard url.username == nil else {
            throw self.error(.invalidURL, "put credentials in mqtt.username and mqtt.password, not in the URL", at: urlNode.mark)
        }
        var mqtt = BridgeConfig.MQTT(url: url, clientID: "ble-mqtt-bridge-\(hostName)")
        if let node = fields("base_topic") { mqtt.baseTopic = try topic(node) }
        if let node = fields("client_id") { mqtt.clientID = try nonEmptyString(node) }
        if let node = fields("username") { mqtt.username = try string(node) }
        if let node = fields("password") {
            mqtt.password = try string(node)
            if mqtt.username == nil {
                throw error(.missingKey, "'mqtt.password' needs 'mqtt.username'", at: node.keyMark)
            }
        }
        if let node = fields("tls") {
            mqtt.tls = try decodeTLS(node)
            if !url.usesTLS {
                warnings.append(
                    error(
                        .ignoredSetting, "'mqtt.tls' has no effect with an mqtt:// URL (use mqtts:// for TLS)",
                        at: node.keyMark))
            }
        }
        if let node = fields("protocol") {
            let text = try string(node)
            switch text.lowercased() {
            case "5", "5.0", "v5", "mqttv5": mqtt.protocolVersion = .v5
            case "3.1.1", "311", "v3.1.1", "mqttv311": mqtt.protocolVersion = .v311
            default:
                throw error(.invalidValue, "unsupported MQTT protocol '\(text)' (use 5 or 3.1.1)", at: node.mark)
            }
        }
        if let node = fields("keepalive") {
            mqtt.keepAlive = try duration(node, minimum: .seconds(5), maximum: .seconds(65535))
        }
        return mqtt
    }

    func decodeTLS(_ value: Located) throws(ConfigError) -> TLSSettings {
        let fields = try mapping(value, known: ConfigKeys.tls)
        var tls = TLSSettings()
        if let node = fields("ca_file") { tls.caFile = try nonEmptyString(node) }
        if let node = fields("cert_file") { tls.certFile = try nonEmptyString(node) }
        if let node = fields("key_file") { tls.keyFile = try nonEmptyString(node) }
        if tls.certFile != nil && tls.keyFile == nil {
            throw error(.missingKey, "'mqtt.tls.cert_file' needs 'mqtt.tls.key_file'", at: fields.entries["cert_file"]?.keyMark)
        }
        if tls.keyFile != nil && tls.certFile == nil {
            throw error(.missingKey, "'mqtt.tls.key_file' needs 'mqtt.tls.cert_file'", at: fields.entries["key_file"]?.keyMark)
        }
        return tls
    }

    func decodeBluetooth(_ value: Located) throws(ConfigError) -> BridgeConfig.Bluetooth {
        let fields = try mapping(value, known: ConfigKeys.bluetooth)
        var bluetooth = BridgeConfig.Bluetooth()
        if let node = fields("adapter") { bluetooth.adapter = try adapterName(node) }
        if let node = fields("adapters") {
            let selection = try adapterSelection(node)
            // Both keys may be written when they agree (`adapters` is what counts).
            if let single = fields("adapter"), case .named(let names) = selection, !names.contains(bluetooth.adapter) {
                throw error(
                    .invalidValue, "'bluetooth.adapter' (\(bluetooth.adapter)) is not one of 'bluetooth.adapters'; set one of them",
                    at: single.mark)
            }
            bluetooth.adapters = selection
            // `adapter` names the first one listed (health's `adapter`); with `all` it stays as written.
            if case .named(let names) = selection { bluetooth.adapter = names[0] }
        }
        if let node = fields("services") {
            var seen = Set<BluetoothUUID>()
            for entry in try list(node) {
                let uuid = try self.uuid(entry)
                if seen.insert(uuid).inserted { bluetooth.services.append(uuid) }
            }
        }
        if let node = fields("scan_watchdog") { bluetooth.scanWatchdog = try scanWatchdog(node) }
        if let node = fields("max_connections") { bluetooth.maxConnections = try integer(node, in: 1...1024) }
        if let node = fields("acquire_notify") { bluetooth.acquireNotify = try bool(node) }
        if let node = fields("agent") { bluetooth.agent = try bool(node) }
        if let node = fields("advertisements") {
            let text = try string(node)
            guard let mode = BridgeConfig.Bluetooth.AdvertisementMode(rawValue: text) else {
                throw error(.invalidValue, "'\(node.path)' must be off or decodable, not '\(text)'", at: node.mark)
            }
            bluetooth.advertisements = mode
        }
        return bluetooth
    }

    func decodeHomeAssistant(_ value: Located) throws(ConfigError) -> BridgeConfig.HomeAssistant {
        let fields = try mapping(value, known: ConfigKeys.homeAssistant)
        var homeAssistant = BridgeConfig.HomeAssistant()
        if let node = fields("discovery") { homeAssistant.discovery = try bool(node) }
        if let node = fields("prefix") { homeAssistant.prefix = try topic(node) }
        if let node = fields("support_url") {
            let text = try string(node)
            let lowercased = text.lowercased()
            guard lowercased.hasPrefix("https://") || lowercased.hasPrefix("http://"),
                !text.contains(where: { $0 == " " || $0.isNewline }), text.split(separator: "/").count >= 2
            else {
                throw error(
                    .invalidValue, "'\(node.path)' must be an http:// or https:// URL, not '\(text)'", at: node.mark)
            }
            homeAssistant.supportURL = text
        }
        return homeAssistant
    }

    func decodeCommands(_ value: Located) throws(ConfigError) -> BridgeConfig.Commands {
        let fields = try mapping(value, known: ConfigKeys.commands)
        var commands = BridgeConfig.Commands()
        if let node = fields("timeout") { commands.timeout = try duration(node) }
        if let node = fields("queue") { commands.queue = try integer(node, in: 1...100_000) }
        if let node = fields("allow") {
            commands.allow = []
            for item in try list(node) {
                let text = try string(item)
                guard let pattern = CommandPattern(text) else {
                    throw error(
                        .invalidValue,
                        "invalid pattern '\(text)' in '\(node.path)' (expected device/service/characteristic, each a glob with * and ?)",
                        at: item.mark)
                }
                commands.allow.append(pattern)
            }
        }
        return commands
    }

    func decodeReconnect(_ value: Located) throws(ConfigError) -> BridgeConfig.Reconnect {
        let fields = try mapping(value, known: ConfigKeys.reconnect)
        var reconnect = BridgeConfig.Reconnect()
        if let node = fields("initial_delay") { reconnect.initialDelay = try duration(node) }
        if let node = fields("max_delay") {
            reconnect.maxDelay = try duration(node)
            if reconnect.maxDelay < reconnect.initialDelay {
                throw error(
                    .invalidValue,
                    "'reconnect.max_delay' (\(DurationSyntax.format(reconnect.maxDelay))) must not be less than 'reconnect.initial_delay' (\(DurationSyntax.format(reconnect.initialDelay)))",
                    at: node.mark)
            }
        } else if reconnect.maxDelay < reconnect.initialDelay {
            reconnect.maxDelay = reconnect.initialDelay
        }
        return reconnect
    }

    static let logLevels: [String: Logger.Level] = [
        "trace": .trace, "debug": .debug, "info": .info, "notice": .notice,
        "warning": .warning, "warn": .warning, "error": .error, "critical": .critical,
    ]

    func decodeLogLevel(_ value: Located) throws(ConfigError) -> Logger.Level {
        let text = try string(value)
        guard let level = Self.logLevels[text.lowercased()] else {
            throw error(
                .invalidValue,
                "unknown log level '\(text)' (use trace, debug, info, notice, warning, error or critical)",
                at: value.mark)
        }
        return level
    }
}
