import BridgeCore

/// The devices added at run time (SPEC §14): the `device/add`, `device/remove` and `device/rename` requests, the
/// retained `{base}/config/devices/{segment}` entries every bridge serves, and the copy in `devices_file`.
///
/// While the broker holds retained entries they are the truth: each one that arrives is served (unless bridge.yaml
/// has the name or address: it wins), an emptied one is removed, and ``configSyncWindow`` after a connection the
/// entries this bridge has but the broker did not replay are removed, or, when the broker replayed none at all (it
/// lost its retained messages), this bridge's entries are published again.
extension SupervisorCore {
    /// How long after a broker connection the retained entries are taken to be all in.
    package static var configSyncWindow: Duration { .seconds(2) }

    /// The §14 requests on devices.
    package static var deviceRequests: [String] { ["device/add", "device/remove", "device/rename"] }

    /// What the executor needs to decode an entry with bridge.yaml's rules and messages (ConfigLoader's
    /// `BridgeConfig.decodeAddedDevice`).
    package typealias AddedDeviceDecoder = @Sendable (JSONValue) throws(ConfigError) -> BridgeConfig.Device

    /// The entries of `devices_file`, at start (before ``Event/started(stored:)``): served like bridge.yaml's devices.
    package mutating func loadAdded(_ entries: [JSONValue], _ out: inout [Action]) {
        var loaded = 0
        for json in entries {
            guard let entry = decodeEntry(json, source: "devices_file", &out) else { continue }
            if added.put(entry) { loaded += 1 }
        }
        guard loaded > 0 else { return }
        out.append(.log(.info, "\(loaded) device(s) added at run time, from devices_file"))
        config.devices = added.merged(with: fixedDevices, trackers: config.trackers)
        topics = TopicMapper(config: config)
        out.append(.devicesChanged(config.devices))
    }

    // MARK: Requests

    /// `device/add`, `device/remove`, `device/rename`: answers (with a §14 error code) and, when accepted, publishes
    /// the retained entries and serves the new set at once.
    mutating func deviceRequest(
        _ command: String, payload: [UInt8], _ response: inout Response, now: Instant, tree: Tree, _ out: inout [Action]
    ) {
        guard config.management else {
            return response.fail(.readOnly, "run-time device management is off (management: false in bridge.yaml)")
        }
        let request: JSONValue
        do {
            request = try JSONParser.parse(payload)
        } catch {
            return response.fail(.invalidPayload, "the payload is not JSON: \(error)")
        }
        guard case .object(var object) = request else {
            return response.fail(.invalidPayload, "expected a JSON object, found \(request.kindName)")
        }
        object.removeAll(key: "transaction")
        switch command {
        case "device/add": addDevice(.object(object), &response, now: now, tree: tree, &out)
        case "device/remove": removeDevice(object, &response, now: now, tree: tree, &out)
        default: renameDevice(object, &response, now: now, tree: tree, &out)
        }
    }

    private mutating func addDevice(_ json: JSONValue, _ response: inout Response, now: Instant, tree: Tree, _ out: inout [Action]) {
        let device: BridgeConfig.Device
        do {
            device = try decodeAddedDevice(json)
        } catch {
            return response.fail(.invalidPayload, error.message)
        }
        let segment = device.name ?? ""
        if let conflict = AddedDevices.conflict(device, fixed: fixedDevices, trackers: config.trackers) {
            return response.fail(.exists, conflict)
        }
        if added[segment] != nil { return response.fail(.exists, "a device named '\(segment)' was added already") }
        if case .address(let address) = device.match, let other = added.segment(address: address) {
            return response.fail(.exists, "\(address) was added already, as '\(other)'")
        }
        response.body = .device(name: segment, address: Self.address(of: device))
        out.append(.log(.notice, "device/add: \(segment) (\(device.match)) [\(device.connection.name)]"))
        out.append(.publishRetained(topic: topics.configDevice(segment), payload: json.jsonBytes))
        added.put(AddedDevices.Entry(json: json, device: device))
        applyAdded(removed: [], now: now, tree: tree, &out)
    }

    private mutating func removeDevice(_ object: JSONObject, _ response: inout Response, now: Instant, tree: Tree, _ out: inout [Action]) {
        guard let segment = runtimeTarget(object, &response) else { return }
        let address = added[segment].flatMap { Self.address(of: $0.device) }
        response.body = .device(name: segment, address: address)
        out.append(.log(.notice, "device/remove: \(segment)"))
        out.append(.publishRetained(topic: topics.configDevice(segment), payload: []))
        added.remove(segment)
        applyAdded(removed: [segment], now: now, tree: tree, &out)
    }

    private mutating func renameDevice(_ object: JSONObject, _ response: inout Response, now: Instant, tree: Tree, _ out: inout [Action]) {
        guard let segment = runtimeTarget(object, &response), var entry = added[segment] else { return }
        guard let name = object["name"]?.stringValue else {
            return response.fail(.invalidPayload, "expected {\"device\": \"<name>\", \"name\": \"<new name>\"}")
        }
        if let problem = TopicMapper.segmentProblem(name) {
            return response.fail(.invalidPayload, "invalid name '\(name)': \(problem)")
        }
        if TopicMapper.reservedSegments.contains(name) {
            return response.fail(.invalidPayload, "invalid name '\(name)': '\(name)' is reserved for the bridge's own topics")
        }
        response.body = .device(name: name, address: Self.address(of: entry.device))
        guard name != segment else { return }
        var renamed = entry.device
        renamed.name = name
        if let conflict = AddedDevices.conflict(renamed, fixed: fixedDevices, trackers: config.trackers) {
            return response.fail(.exists, conflict)
        }
        if added[name] != nil { return response.fail(.exists, "a device named '\(name)' was added already") }
        guard case .object(var json) = entry.json else { return }
        json.removeAll(key: "name")
        json.members.insert(.init(key: "name", value: .string(name)), at: 0)
        entry = AddedDevices.Entry(json: .object(json), device: renamed)
        out.append(.log(.notice, "device/rename: \(segment) → \(name)"))
        out.append(.publishRetained(topic: topics.configDevice(name), payload: entry.json.jsonBytes))
        out.append(.publishRetained(topic: topics.configDevice(segment), payload: []))
        added.remove(segment)
        added.put(entry)
        applyAdded(removed: [], renamed: [segment: name], now: now, tree: tree, &out)
    }

    /// The run-time device a remove or rename names: nil (and the answer's error) when there is none.
    private func runtimeTarget(_ object: JSONObject, _ response: inout Response) -> String? {
        guard let segment = object["device"]?.stringValue else {
            response.fail(.invalidPayload, "expected {\"device\": \"<name>\"}")
            return nil
        }
        if added[segment] != nil { return segment }
        if fixedDevices.contains(where: { $0.name == segment })
            || devices.values.contains(where: { $0.segment == segment })
        {
            response.fail(.readOnly, "'\(segment)' is configured in bridge.yaml, not added at run time")
        } else {
            response.fail(.notFound, "no device '\(segment)' was added at run time")
        }
        return nil
    }

    // MARK: Retained entries

    /// A message on `{base}/config/devices/{segment}`: served, replaced or (empty) removed.
    mutating func configDevice(_ segment: String, payload: [UInt8], now: Instant, tree: Tree, _ out: inout [Action]) {
        if !payload.isEmpty { configSync?.seen.insert(segment) }
        guard !payload.isEmpty else {
            guard added.remove(segment) != nil else { return }
            out.append(.log(.notice, "\(segment) was removed at run time (its config/devices entry was cleared)"))
            applyAdded(removed: [segment], now: now, tree: tree, &out)
            return
        }
        let json: JSONValue
        do {
            json = try JSONParser.parse(payload)
        } catch {
            out.append(.log(.warning, "ignoring config/devices/\(segment): not JSON (\(error))"))
            return
        }
        guard let entry = decodeEntry(json, source: "config/devices/\(segment)", &out) else { return }
        guard entry.segment == segment else {
            out.append(.log(.warning, "ignoring config/devices/\(segment): its name is '\(entry.segment)'"))
            return
        }
        if case .address(let address) = entry.device.match, let other = added.segment(address: address), other != segment {
            out.append(.log(.warning, "ignoring config/devices/\(segment): \(address) is served as '\(other)'"))
            return
        }
        guard added[segment] != entry else { return }
        added.put(entry)
        out.append(.log(.info, "serving \(segment) (\(entry.device.match)), added at run time"))
        applyAdded(removed: [], now: now, tree: tree, &out)
    }

    /// The end of the sync window: the broker's entries are all in.
    mutating func configSyncEnded(now: Instant, tree: Tree, _ out: inout [Action]) {
        guard let sync = configSync else { return }
        configSync = nil
        if sync.seen.isEmpty {
            guard !added.segments.isEmpty else { return }
            out.append(.log(
                .notice, "the broker holds no run-time device: publishing the \(added.segments.count) of devices_file again"))
            for segment in added.segments {
                if let json = added[segment]?.json {
                    out.append(.publishRetained(topic: topics.configDevice(segment), payload: json.jsonBytes))
                }
            }
            return
        }
        let gone = added.segments.filter { !sync.seen.contains($0) }
        guard !gone.isEmpty else { return }
        for segment in gone {
            added.remove(segment)
            out.append(.log(.notice, "\(segment) was removed at run time while this bridge was away from the broker"))
        }
        applyAdded(removed: Set(gone), now: now, tree: tree, &out)
    }

    /// An entry decoded with bridge.yaml's rules; nil (logged) when it is invalid or bridge.yaml has its name or
    /// address.
    private func decodeEntry(_ given: JSONValue, source: String, _ out: inout [Action]) -> AddedDevices.Entry? {
        // A request copied by hand may carry its transaction: it is no device key.
        var json = given
        if case .object(var object) = given {
            object.removeAll(key: "transaction")
            json = .object(object)
        }
        let device: BridgeConfig.Device
        do {
            device = try decodeAddedDevice(json)
        } catch {
            out.append(.log(.warning, "ignoring the device of \(source): \(error.message)"))
            return nil
        }
        if let conflict = AddedDevices.conflict(device, fixed: fixedDevices, trackers: config.trackers) {
            out.append(.log(.notice, "ignoring the device of \(source): \(conflict) (bridge.yaml wins)"))
            return nil
        }
        return AddedDevices.Entry(json: json, device: device)
    }

    static func address(of device: BridgeConfig.Device) -> String? {
        if case .address(let address) = device.match { return address.description }
        return nil
    }
}

extension SupervisorCore.Response {
    /// `status: error` with a §14 code and message.
    package mutating func fail(_ code: Code, _ message: String) {
        error = message
        errorCode = code
    }
}
