/// Maps devices, services and characteristics to the MQTT topics of SPEC §4,
/// and parses the command topics the bridge subscribes to.
///
/// Segments: a device is its configured `name`, else its address in lowercase
/// hex without separators (`c8123456789a`); a service or characteristic is
/// its configured `name`, else ``BluetoothUUID/shortForm``.
///
/// Topic strings for a characteristic are built once (``characteristicTopics(device:service:characteristic:)``)
/// and kept by the runtime, so publishing a value builds no strings.
///
/// With `cluster.enabled` (SPEC §10) the bridge's own topics move from `{base}/bridge/…` to
/// `{base}/bridges/{id}/…`, and ``cluster`` holds the topics only a cluster member uses; device topics do not change.
public struct TopicMapper: Sendable {
    /// The reserved segment under the base topic for the bridge's own topics.
    public static let bridgeSegment = "bridge"
    /// The reserved segment under the base topic for the bridges' own topics in a cluster (SPEC §10).
    public static let bridgesSegment = "bridges"
    /// The service segment of a profile's named commands (SPEC §15): `{base}/{device}/command/{name}/set`.
    public static let commandSegment = "command"
    /// The segment under the base topic of what every bridge shares (SPEC §14: `{base}/config/devices/{segment}`).
    public static let configSegment = "config"
    /// The segments under the base topic no device may use (a device `name` is checked against them).
    public static let reservedSegments: Set<String> = [bridgeSegment, bridgesSegment, configSegment]

    /// `mqtt.base_topic`.
    public let baseTopic: String
    /// `homeassistant.prefix`.
    public let discoveryPrefix: String
    /// The `devices` entries.
    public let devices: [BridgeConfig.Device]
    let prefix: String  // "{base}/"

    /// Creates a mapper from the configuration: with `cluster.enabled`, the bridge's own topics are those of
    /// `bridge.id` under `{base}/bridges/`.
    public init(config: BridgeConfig) {
        self.init(
            baseTopic: config.mqtt.baseTopic, devices: config.devices, discoveryPrefix: config.homeAssistant.prefix,
            clusterBridgeID: config.cluster.enabled ? config.bridgeID : nil)
    }

    /// Creates a mapper from a base topic and device entries.
    /// - Parameter clusterBridgeID: this bridge's id when the cluster is on (a valid ``BridgeID``), else `nil`.
    public init(
        baseTopic: String, devices: [BridgeConfig.Device] = [], discoveryPrefix: String = "homeassistant",
        clusterBridgeID: String? = nil
    ) {
        precondition(clusterBridgeID.map(BridgeID.isValid) ?? true, "invalid bridge id \(clusterBridgeID ?? "")")
        self.baseTopic = baseTopic
        self.devices = devices
        self.discoveryPrefix = discoveryPrefix
        self.prefix = baseTopic + "/"
        let own = clusterBridgeID.map { "\(baseTopic)/\(Self.bridgesSegment)/\($0)" } ?? "\(baseTopic)/\(Self.bridgeSegment)"
        self.ownPrefix = own + "/"
        self.cluster = clusterBridgeID.map { ClusterTopics(baseTopic: baseTopic, bridgeID: $0) }
        self.bridgeState = "\(own)/state"
        self.bridgeDevices = "\(own)/devices"
        self.bridgeHealth = "\(own)/health"
        self.keepAliveProbe = "\(own)/keepalive"
        self.bridgeRequestFilter = "\(own)/request/+"
        self.setFilter = "\(baseTopic)/+/+/+/set"
        self.getFilter = "\(baseTopic)/+/+/+/get"
    }

    // MARK: - Bridge topics

    /// `{own}/`: `{base}/bridge/`, or `{base}/bridges/{id}/` with the cluster on.
    let ownPrefix: String

    /// The topics of a cluster member (SPEC §10); `nil` when `cluster.enabled` is false.
    public let cluster: ClusterTopics?

    /// `{base}/bridge/state`, or `{base}/bridges/{id}/state` with the cluster on (retained `online`/`offline`,
    /// also the last will).
    public let bridgeState: String
    /// `{base}/bridge/health`, or `{base}/bridges/{id}/health` with the cluster on (SPEC §9, not retained).
    public let bridgeHealth: String
    /// `{own}/keepalive`: the filter the MQTT client unsubscribes from as its keep-alive probe (SPEC §10 rule 7);
    /// never subscribed, never published.
    public let keepAliveProbe: String
    /// `{base}/bridge/devices`, or `{base}/bridges/{id}/devices` with the cluster on (retained JSON array).
    public let bridgeDevices: String
    /// `{base}/bridge/request/+`, or `{base}/bridges/{id}/request/+` with the cluster on: the filter for bridge
    /// commands.
    public let bridgeRequestFilter: String
    /// `{base}/+/+/+/set`: the filter for write commands.
    public let setFilter: String
    /// `{base}/+/+/+/get`: the filter for read commands.
    public let getFilter: String

    /// `{own}/request/device/+`: the filter for the run-time device requests (SPEC §14: `device/add`, ...).
    public var deviceRequestFilter: String { "\(ownPrefix)request/device/+" }
    /// `{base}/config/devices/+`: the devices added at run time, retained (SPEC §14), shared by every bridge.
    public var configDevicesFilter: String { "\(prefix)\(Self.configSegment)/devices/+" }

    /// `{base}/config/devices/{segment}`: a device added at run time (retained; empty: removed).
    public func configDevice(_ segment: String) -> String { "\(prefix)\(Self.configSegment)/devices/\(segment)" }

    /// Every command filter the bridge subscribes to (a cluster member also subscribes to
    /// ``ClusterTopics/filters``).
    public var commandFilters: [String] {
        [setFilter, getFilter, bridgeRequestFilter, deviceRequestFilter, configDevicesFilter]
    }

    /// `{base}/bridge/request/{command}`, or `{base}/bridges/{id}/request/{command}` with the cluster on.
    public func bridgeRequest(_ command: String) -> String { "\(ownPrefix)request/\(command)" }

    /// `{base}/bridge/response/{command}`, or `{base}/bridges/{id}/response/{command}` with the cluster on.
    public func bridgeResponse(_ command: String) -> String { "\(ownPrefix)response/\(command)" }

    /// `{prefix}/{component}/{nodeID}/{objectID}/config`: a Home Assistant discovery topic.
    public func discoveryConfig(component: String, nodeID: String, objectID: String) -> String {
        "\(discoveryPrefix)/\(component)/\(nodeID)/\(objectID)/config"
    }

    // MARK: - Segments

    /// The `devices` entry for a peripheral (address match first, then name); see ``BridgeConfig/device(address:name:)``.
    public func deviceConfig(address: BluetoothAddress, name: String?) -> BridgeConfig.Device? {
        if let byAddress = devices.first(where: { $0.match == .address(address) }) { return byAddress }
        guard let name else { return nil }
        return devices.first { device in
            if case .name(let pattern) = device.match { return pattern.matches(name) }
            return false
        }
    }

    /// The device segment: the entry's `name`, else `c8123456789a`.
    public func deviceSegment(address: BluetoothAddress, config: BridgeConfig.Device?) -> String {
        config?.name ?? address.topicSegment
    }

    /// The device segment of a peripheral, looking up its `devices` entry.
    public func deviceSegment(address: BluetoothAddress, name: String?) -> String {
        deviceSegment(address: address, config: deviceConfig(address: address, name: name))
    }

    /// The service segment: the entry's service `name`, else the UUID's short form.
    public func serviceSegment(_ uuid: BluetoothUUID, config: BridgeConfig.Device?) -> String {
        config?.service(uuid)?.name ?? uuid.shortForm
    }

    /// The characteristic segment: the entry's characteristic `name`, else the UUID's short form.
    public func characteristicSegment(_ uuid: BluetoothUUID, config: BridgeConfig.Device?) -> String {
        config?.characteristic(uuid)?.name ?? uuid.shortForm
    }

    /// The format of a characteristic: configured, else the SIG default.
    public func format(of uuid: BluetoothUUID, config: BridgeConfig.Device?) -> ValueFormat {
        config?.characteristic(uuid)?.format ?? .default(for: uuid)
    }

    // MARK: - Device topics

    /// `{base}/{device}/availability` (retained `online`/`offline`).
    public func availability(device: String) -> String { "\(prefix)\(device)/availability" }

    /// `{base}/{device}/advertisement` (SPEC §7).
    public func advertisement(device: String) -> String { "\(prefix)\(device)/advertisement" }

    /// `{base}/{tracker}/presence` (SPEC §12, retained): a tracker's presence.
    public func presence(tracker: String) -> String { "\(prefix)\(tracker)/presence" }

    /// `{base}/{device}/values` (SPEC §15): the values a device profile decodes.
    public func values(device: String) -> String { "\(prefix)\(device)/values" }

    /// `{base}/{device}/command/{name}/result` (SPEC §15): a profile command's result.
    public func commandResult(device: String, name: String) -> String {
        result(device: device, service: Self.commandSegment, characteristic: name)
    }

    /// `{base}/{device}/{service}/{characteristic}`: the value topic.
    public func value(device: String, service: String, characteristic: String) -> String {
        "\(prefix)\(device)/\(service)/\(characteristic)"
    }

    /// `.../{characteristic}/set`.
    public func set(device: String, service: String, characteristic: String) -> String {
        value(device: device, service: service, characteristic: characteristic) + "/set"
    }

    /// `.../{characteristic}/get`.
    public func get(device: String, service: String, characteristic: String) -> String {
        value(device: device, service: service, characteristic: characteristic) + "/get"
    }

    /// `.../{characteristic}/result`.
    public func result(device: String, service: String, characteristic: String) -> String {
        value(device: device, service: service, characteristic: characteristic) + "/result"
    }

    /// All topics of one characteristic, built once.
    public func characteristicTopics(device: String, service: String, characteristic: String) -> CharacteristicTopics {
        CharacteristicTopics(value: value(device: device, service: service, characteristic: characteristic))
    }

    // MARK: - Incoming

    /// Parses a topic the bridge received: `{base}/{device}/{service}/{characteristic}/set|get`
    /// or this bridge's `{own}/request/{command}` (see ``bridgeRequestFilter``). `nil` for anything else,
    /// the requests of other bridges included.
    public func parse(_ topic: String) -> IncomingTopic? {
        guard topic.hasPrefix(prefix) else { return nil }
        let rest = topic.utf8.dropFirst(prefix.utf8.count)
        var parts: [Substring] = []
        parts.reserveCapacity(5)
        var start = rest.startIndex
        var index = start
        while index != rest.endIndex {
            if rest[index] == 0x2F {  // "/"
                if parts.count == 5 { return nil }
                parts.append(Substring(topic[start..<index]))
                start = rest.index(after: index)
            }
            index = rest.index(after: index)
        }
        parts.append(Substring(topic[start..<rest.endIndex]))
        for part in parts where part.isEmpty || part.utf8.contains(0x2B) || part.utf8.contains(0x23) {
            return nil
        }
        if parts.count == 3, parts[0] == Self.configSegment, parts[1] == "devices" {
            return .configDevice(segment: String(parts[2]))
        }
        if let cluster {
            if parts.count >= 4, parts[0] == Self.bridgesSegment, parts[1] == cluster.bridgeID, parts[2] == "request" {
                return Self.request(parts.dropFirst(3))
            }
        } else if parts.count >= 3, parts[0] == Self.bridgeSegment, parts[1] == "request" {
            return Self.request(parts.dropFirst(2))
        }
        guard parts.count == 4, parts[0] != Self.bridgeSegment, parts[0] != Self.bridgesSegment,
            let operation = CharacteristicOperation(rawValue: String(parts[3]))
        else { return nil }
        return .characteristic(
            device: String(parts[0]), service: String(parts[1]), characteristic: String(parts[2]), operation: operation)
    }

    /// `{command}` or `device/{command}` (SPEC §14's requests), nil for deeper topics.
    private static func request(_ parts: ArraySlice<Substring>) -> IncomingTopic? {
        if parts.count == 1 { return .bridgeRequest(command: String(parts[parts.startIndex])) }
        guard parts.count == 2, parts[parts.startIndex] == "device" else { return nil }
        return .bridgeRequest(command: "device/" + parts[parts.startIndex + 1])
    }

    // MARK: - Validation

    /// Why `name` cannot be a single topic level, or `nil` when it can.
    public static func segmentProblem(_ name: String) -> String? {
        if name.isEmpty { return "a topic segment must not be empty" }
        for byte in name.utf8 {
            switch byte {
            case 0x2F, 0x2B, 0x23: return "a topic segment must not contain '/', '+' or '#'"
            case 0x00: return "a topic segment must not contain NUL"
            default: continue
            }
        }
        return nil
    }

    /// Why `topic` cannot be a base topic (one or more levels), or `nil` when it can.
    public static func topicProblem(_ topic: String) -> String? {
        if topic.isEmpty { return "a topic must not be empty" }
        if topic.hasPrefix("$") { return "a topic must not start with '$'" }
        if topic.utf8.count > 1024 { return "the topic is too long" }
        for level in topic.split(separator: "/", omittingEmptySubsequences: false) {
            if level.isEmpty { return "a topic must not have empty levels (leading, trailing or double '/')" }
            if let problem = segmentProblem(String(level)) { return problem.replacingText("a topic segment", with: "a topic") }
        }
        return nil
    }
}


/// The topics of one characteristic (SPEC §4).
public struct CharacteristicTopics: Sendable, Hashable {
    /// `{base}/{device}/{service}/{characteristic}`: values are published here.
    public let value: String
    /// `.../set`: write commands.
    public let set: String
    /// `.../get`: read commands.
    public let get: String
    /// `.../result`: command results.
    public let result: String

    /// Builds the topics from the value topic.
    public init(value: String) {
        self.value = value
        self.set = value + "/set"
        self.get = value + "/get"
        self.result = value + "/result"
    }
}

/// A read or write command on a characteristic.
public enum CharacteristicOperation: String, Sendable, Hashable {
    /// `/set`: write.
    case set
    /// `/get`: read.
    case get
}

/// A topic the bridge received, as parsed by ``TopicMapper/parse(_:)``.
public enum IncomingTopic: Sendable, Hashable {
    /// `{base}/{device}/{service}/{characteristic}/set|get`.
    case characteristic(device: String, service: String, characteristic: String, operation: CharacteristicOperation)
    /// `{base}/bridge/request/{command}` (also `device/add`, ...: SPEC §14).
    case bridgeRequest(command: String)
    /// `{base}/config/devices/{segment}`: a device added at run time (SPEC §14).
    case configDevice(segment: String)
}
