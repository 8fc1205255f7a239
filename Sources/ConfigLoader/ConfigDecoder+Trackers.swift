import BridgeCore

/// `trackers` (SPEC §12).
extension ConfigDecoder {
    /// The `trackers` entries; an entry with an error is left out and its error collected, so that every entry is
    /// checked. `devices` are the decoded `devices` entries: a tracker's name must not be one of their topic segments.
    func decodeTrackers(_ value: Located, devices: [BridgeConfig.Device], errors: inout [ConfigError]) -> [BridgeConfig.Tracker] {
        let entries: [Located]
        do { entries = try list(value) } catch {
            errors.append(error)
            return []
        }
        var deviceSegments: Set<String> = []
        for device in devices {
            if let name = device.name {
                deviceSegments.insert(name)
            } else if case .address(let address) = device.match {
                deviceSegments.insert(address.topicSegment)
            }
        }
        var names: [String: Position?] = [:]
        var matches: [BridgeConfig.Tracker.Match: Position?] = [:]
        var trackers: [BridgeConfig.Tracker] = []
        for entry in entries {
            do {
                trackers.append(
                    try decodeTracker(entry, deviceSegments: deviceSegments, names: &names, matches: &matches))
            } catch {
                errors.append(error)
            }
        }
        return trackers
    }

    /// One `trackers` entry.
    func decodeTracker(
        _ entry: Located, deviceSegments: Set<String>, names: inout [String: Position?],
        matches: inout [BridgeConfig.Tracker.Match: Position?]
    ) throws(ConfigError) -> BridgeConfig.Tracker {
        let fields = try mapping(entry, known: ConfigKeys.tracker)
        guard let nameNode = fields("name") else {
            throw error(.missingKey, "missing required key 'name' in '\(entry.path)' (the tracker's topic segment)", at: entry.mark)
        }
        let name = try segmentName(nameNode)
        if TopicMapper.reservedSegments.contains(name) {
            throw error(
                .invalidName, "invalid name '\(name)' for '\(nameNode.path)': '\(name)' is reserved for the bridge's own topics",
                at: nameNode.mark)
        }
        if deviceSegments.contains(name) {
            throw error(
                .duplicateName, "tracker name '\(name)' is already a device's topic segment (in 'devices')", at: nameNode.mark)
        }
        if let first = names[name] {
            throw error(
                .duplicateName, "duplicate tracker name '\(name)'\(first.map { " (first used at line \($0.line))" } ?? "")",
                at: nameNode.mark)
        }
        guard let matchNode = fields("match") else {
            throw error(.missingKey, "missing required key 'match' in '\(entry.path)'", at: entry.mark)
        }
        let match = try decodeTrackerMatch(matchNode)
        if let first = matches[match] {
            throw error(
                .duplicateName,
                "another tracker has the same match (\(match))\(first.map { " at line \($0.line)" } ?? "")",
                at: matchNode.mark)
        }
        var tracker = BridgeConfig.Tracker(name: name, match: match)
        if let node = fields("away_after") { tracker.awayAfter = try duration(node, minimum: .seconds(1)) }
        names[name] = nameNode.mark
        matches[match] = matchNode.mark
        return tracker
    }

    /// `match`: exactly one of `address`, `ibeacon` and `irk`.
    func decodeTrackerMatch(_ value: Located) throws(ConfigError) -> BridgeConfig.Tracker.Match {
        let fields = try mapping(value, known: ConfigKeys.trackerMatch)
        let given = ConfigKeys.trackerMatch.compactMap { key in fields(key).map { (key, $0) } }
        guard let (key, node) = given.first else {
            throw error(.missingKey, "'\(value.path)' needs one of 'address', 'ibeacon' or 'irk'", at: value.keyMark)
        }
        guard given.count == 1 else {
            throw error(
                .invalidValue, "'\(value.path)' takes one of 'address', 'ibeacon' or 'irk', not \(given.map { "'\($0.0)'" }.joined(separator: " and "))",
                at: value.mark)
        }
        let text = try string(node)
        switch key {
        case "address":
            guard let address = BluetoothAddress(text) else {
                throw error(.invalidAddress, "invalid Bluetooth address '\(text)' (expected AA:BB:CC:DD:EE:FF)", at: node.mark)
            }
            return .address(address)
        case "ibeacon":
            guard let identity = IBeacon.Identity(text) else {
                throw error(
                    .invalidValue,
                    "invalid iBeacon '\(text)' for '\(node.path)' (expected uuid:major:minor, e.g. \"fda50693-a4e2-4fb1-afcf-c6eb07647825:1:2\", major and minor 0 to 65535)",
                    at: node.mark)
            }
            return .iBeacon(identity)
        default:
            guard let key = IdentityResolvingKey(hex: text) else {
                // Never echo the text: it may be most of a secret key.
                throw error(
                    .invalidValue,
                    "'\(node.path)' must be 32 hex digits (a 16-byte identity resolving key, most significant byte first), found \(text.utf8.count) characters",
                    at: node.mark)
            }
            return .irk(key)
        }
    }
}
