import BridgeCore
import YAMLKit

extension ConfigDecoder {
    /// The `devices` entries; an entry with an error is left out and its error collected, so that
    /// every entry is checked.
    func decodeDevices(_ value: Located, errors: inout [ConfigError]) -> [BridgeConfig.Device] {
        var devices: [BridgeConfig.Device] = []
        var names: [String: Position?] = [:]
        var addresses: [BluetoothAddress: Position?] = [:]
        let entries: [Located]
        do { entries = try list(value) } catch {
            errors.append(error)
            return []
        }
        for entry in entries {
            do {
                devices.append(try decodeDevice(entry, names: &names, addresses: &addresses))
            } catch {
                errors.append(error)
            }
        }
        return devices
    }

    /// One `devices` entry.
    func decodeDevice(
        _ entry: Located, names: inout [String: Position?], addresses: inout [BluetoothAddress: Position?]
    ) throws(ConfigError) -> BridgeConfig.Device {
        let fields = try mapping(entry, known: ConfigKeys.device)
        guard let matchNode = fields("match") else {
            throw error(.missingKey, "missing required key 'match' in '\(entry.path)'", at: entry.mark)
        }
        let match = try decodeMatch(matchNode)
        if case .address(let address) = match {
            if let first = addresses[address] {
                throw error(
                    .duplicateName,
                    "device \(address) is already configured\(first.map { " at line \($0.line)" } ?? "")",
                    at: matchNode.mark)
            }
            addresses[address] = matchNode.mark
        }
        var device = BridgeConfig.Device(match: match)
        if let node = fields("name") {
            let name = try segmentName(node)
            guard !TopicMapper.reservedSegments.contains(name) else {
                throw error(
                    .invalidName,
                    "invalid name '\(name)' for '\(node.path)': '\(name)' is reserved for the bridge's own topics",
                    at: node.mark)
            }
            if let first = names[name] {
                throw error(
                    .duplicateName,
                    "duplicate device name '\(name)'\(first.map { " (first used at line \($0.line))" } ?? "")",
                    at: node.mark)
            }
            names[name] = node.mark
            device.name = name
        }
        if let node = fields("characteristics") { device.characteristics = try decodeCharacteristics(node) }
        if let node = fields("services") { device.services = try decodeServices(node) }
        device.profile = try decodeDeviceProfile(fields)
        device.connection = try decodeConnection(fields, entry: entry, profile: device.profile?.profile)
        if let node = fields("only_services") {
            var only: [BluetoothUUID] = []
            for item in try list(node) {
                let uuid = try self.uuid(item)
                if !only.contains(uuid) { only.append(uuid) }
            }
            device.onlyServices = only
        }
        try decodePairing(fields, entry: entry, into: &device)
        return device
    }

    func decodeMatch(_ value: Located) throws(ConfigError) -> BridgeConfig.Device.Match {
        let fields = try mapping(value, known: ConfigKeys.match)
        switch (fields("address"), fields("name")) {
        case (let addressNode?, nil):
            let text = try string(addressNode)
            guard let address = BluetoothAddress(text) else {
                throw error(
                    .invalidAddress, "invalid Bluetooth address '\(text)' (expected AA:BB:CC:DD:EE:FF)", at: addressNode.mark)
            }
            return .address(address)
        case (nil, let nameNode?):
            return .name(NamePattern(try nonEmptyString(nameNode)))
        case (.some, .some):
            throw error(.invalidValue, "'\(value.path)' takes either 'address' or 'name', not both", at: value.mark)
        case (nil, nil):
            throw error(.missingKey, "'\(value.path)' needs 'address' or 'name'", at: value.keyMark)
        }
    }

    func decodeCharacteristics(_ value: Located) throws(ConfigError) -> [BridgeConfig.Characteristic] {
        var result: [BridgeConfig.Characteristic] = []
        var seen: [BluetoothUUID: Position?] = [:]
        for entry in try list(value) {
            let fields = try mapping(entry, known: ConfigKeys.characteristic)
            let uuid = try uniqueUUID(fields, of: entry, "characteristic", seen: &seen)
            var characteristic = BridgeConfig.Characteristic(uuid: uuid)
            if let node = fields("name") { characteristic.name = try segmentName(node) }
            if let node = fields("format") {
                let text = try string(node)
                guard let format = ValueFormat(rawValue: text) else {
                    var message = "unknown format '\(text)'"
                    if let suggestion = KeySuggestion.closest(to: text, in: ValueFormat.allNames) {
                        message += " (did you mean '\(suggestion)'?)"
                    } else {
                        message += " (known formats: \(ValueFormat.allNames.joined(separator: ", ")))"
                    }
                    throw error(.invalidFormat, message, at: node.mark)
                }
                characteristic.format = format
            }
            if let node = fields("poll") { characteristic.poll = try duration(node) }
            if let node = fields("write_types") { characteristic.writeTypes = try writeTypes(node) }
            if let node = fields("press") {
                let text = try string(node)
                guard let bytes = try? Hex.decode(text), !bytes.isEmpty else {
                    throw error(.invalidValue, "'\(node.path)' must be the hex bytes the button writes, e.g. \"01\", not '\(text)'", at: node.mark)
                }
                characteristic.press = bytes
            }
            switch (fields("min"), fields("max")) {
            case (nil, nil): break
            case (let low?, let high?):
                let (a, b) = (try number(low), try number(high))
                guard a < b else { throw error(.invalidValue, "'\(low.path)' must be below '\(high.path)'", at: low.mark) }
                characteristic.range = a...b
            case (let one?, nil), (nil, let one?):
                throw error(.invalidValue, "'\(one.path)' needs both 'min' and 'max'", at: one.mark)
            }
            result.append(characteristic)
        }
        return result
    }

    /// `write_types: [request, command]`: a non-empty list of ``GattWriteType`` names.
    func writeTypes(_ value: Located) throws(ConfigError) -> Set<GattWriteType> {
        let names = GattWriteType.allCases.map(\.rawValue)
        var types = Set<GattWriteType>()
        let entries: [Located]
        if case .scalar = value.node {
            entries = [value]  // `write_types: command` reads as a list of one
        } else {
            entries = try list(value)
        }
        for entry in entries {
            let text = try string(entry)
            guard let type = GattWriteType(rawValue: text) else {
                var message = "unknown write type '\(text)' in '\(value.path)' (known: \(names.joined(separator: ", ")))"
                if let suggestion = KeySuggestion.closest(to: text, in: names) {
                    message += "; did you mean '\(suggestion)'?"
                }
                throw error(.invalidValue, message, at: entry.mark)
            }
            types.insert(type)
        }
        guard !types.isEmpty else {
            throw error(
                .invalidValue, "'\(value.path)' must list at least one of \(names.joined(separator: ", "))",
                at: value.mark)
        }
        return types
    }

    func decodeServices(_ value: Located) throws(ConfigError) -> [BridgeConfig.Service] {
        var result: [BridgeConfig.Service] = []
        var seen: [BluetoothUUID: Position?] = [:]
        for entry in try list(value) {
            let fields = try mapping(entry, known: ConfigKeys.service)
            let uuid = try uniqueUUID(fields, of: entry, "service", seen: &seen)
            var service = BridgeConfig.Service(uuid: uuid)
            if let node = fields("name") {
                service.name = try segmentName(node)
                guard service.name != Self.reservedServiceName else {
                    throw error(
                        .invalidName,
                        "invalid name '\(Self.reservedServiceName)' for '\(node.path)': '\(Self.reservedServiceName)' is reserved for profile commands ({device}/command/{name})",
                        at: node.mark)
                }
            }
            result.append(service)
        }
        return result
    }

    /// `connection` with the keys that go with it: `poll_interval` and `listen` (poll),
    /// `advertisement` (advertisement); each of them without its policy is an error. A device
    /// with a profile and no `connection` takes the profile's, and its `interval` unless
    /// `poll_interval` overrides it; it cannot be an advertisement device.
    func decodeConnection(_ fields: Fields, entry: Located, profile: DeviceProfile? = nil) throws(ConfigError) -> ConnectionPolicy {
        var word = profile?.connection.rawValue ?? "always"
        if let node = fields("connection") {
            word = try string(node)
            guard ["always", "poll", "advertisement"].contains(word) else {
                throw error(.invalidValue, "'\(node.path)' must be always, poll or advertisement, not '\(word)'", at: node.mark)
            }
            if let profile, word == "advertisement" {
                throw error(
                    .invalidValue,
                    "'connection: advertisement' does not go with 'profile' (\(profile.id) connects: use always or poll)",
                    at: node.mark)
            }
        }
        for (key, owner) in [("poll_interval", "poll"), ("listen", "poll"), ("advertisement", "advertisement")]
        where word != owner {
            if let node = fields(key) {
                throw error(
                    .ignoredSetting, "'\(node.path)' needs 'connection: \(owner)' (this device is '\(word)')",
                    at: node.keyMark)
            }
        }
        switch word {
        case "poll":
            let interval: Duration
            if let intervalNode = fields("poll_interval") {
                interval = try duration(intervalNode, minimum: .seconds(1))
            } else if let profileInterval = profile?.interval {
                interval = profileInterval
            } else {
                throw error(.missingKey, "'connection: poll' needs 'poll_interval' in '\(entry.path)' (e.g. poll_interval: 10m)", at: entry.mark)
            }
            let listen = try fields("listen").map { node throws(ConfigError) in try duration(node, minimum: .zero) } ?? .zero
            if listen >= interval, let node = fields("listen") {
                throw error(
                    .invalidValue,
                    "'\(node.path)' (\(DurationSyntax.format(listen))) must be shorter than 'poll_interval' (\(DurationSyntax.format(interval)))",
                    at: node.mark)
            }
            return .poll(interval: interval, listen: listen)
        case "advertisement":
            var bindkey: [UInt8]?
            var timeout: Duration = .seconds(600)
            if let node = fields("advertisement") {
                let adv = try mapping(node, known: ConfigKeys.advertisement)
                if let keyNode = adv("bindkey") {
                    let text = try string(keyNode)
                    // 24 digits: the 12-byte key of MiBeacon v2/v3 (SPEC §13).
                    guard text.utf8.count == 32 || text.utf8.count == 24, let bytes = try? Hex.decode(text) else {
                        throw error(
                            .invalidValue,
                            "'\(keyNode.path)' must be 32 hex digits (a 16-byte AES key; 24 for a MiBeacon v2/v3 key), found \(text.utf8.count) characters",
                            at: keyNode.mark)
                    }
                    bindkey = bytes
                }
                if let t = adv("timeout") { timeout = try duration(t, minimum: .seconds(1)) }
            }
            return .advertisement(bindkey: bindkey, timeout: timeout)
        default:
            return .always
        }
    }

    /// The required `uuid` of a list entry, which no earlier entry of the list has.
    func uniqueUUID(
        _ fields: Fields, of entry: Located, _ what: String, seen: inout [BluetoothUUID: Position?]
    ) throws(ConfigError) -> BluetoothUUID {
        guard let uuidNode = fields("uuid") else {
            throw error(.missingKey, "missing required key 'uuid' in '\(entry.path)'", at: entry.mark)
        }
        let uuid = try self.uuid(uuidNode)
        if let first = seen[uuid] {
            throw error(
                .duplicateName,
                "\(what) \(uuid.shortForm) is listed twice\(first.map { " (first at line \($0.line))" } ?? "")",
                at: uuidNode.mark)
        }
        seen[uuid] = uuidNode.mark
        return uuid
    }
}
