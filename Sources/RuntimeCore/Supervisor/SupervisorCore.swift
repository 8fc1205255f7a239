import BridgeCore
import Logging

/// The supervisor's decisions, as a pure state machine: ``handle(_:now:tree:unixTime:)`` takes one input
/// (with the time and what the executor read of BlueZ's tree) and returns the actions to
/// perform, in order. No I/O, no tasks, no clock: ``Supervisor`` executes the actions and
/// feeds the results of its BlueZ calls back as inputs. With `cluster.enabled` it steps this bridge's
/// ``ClusterCore`` itself (``SupervisorCore+Cluster``): one owner of the cluster's decisions.
///
/// It decides, for every adapter in use (`bluetooth.adapters`, SPEC §10): powering it on; its scan
/// (start, stop, retry after `InProgress`, held while stored peripherals connect, its filter, passive
/// monitoring); its scan watchdog. And: which devices get a session, on which adapter (one session per
/// address, ``AdapterPlacement``), when it moves to another adapter, and when it ends; when stored peripherals are connected again; when
/// health, `bridge/devices` and Home Assistant configs are published; the shutdown sequence. It
/// keeps the managed devices' state from the sessions' reports and writes it to the registry
/// (``Action/record(_:)``): the supervisor is the registry's only writer.
package struct SupervisorCore<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The configuration; its `devices` are bridge.yaml's and those added at run time (``added``, SPEC §14).
    package internal(set) var config: BridgeConfig
    package internal(set) var topics: TopicMapper
    /// bridge.yaml's devices (they win over a run-time entry of the same name or address).
    package let fixedDevices: [BridgeConfig.Device]
    /// The devices added at run time (SPEC §14).
    package internal(set) var added = AddedDevices()
    /// Decodes a run-time entry with bridge.yaml's rules (ConfigLoader's; set by the executor).
    package var decodeAddedDevice: AddedDeviceDecoder = { _ throws(ConfigError) in
        throw ConfigError(code: .invalidValue, file: "device/add", line: 1, column: 1, message: "no decoder for run-time devices")
    }
    /// After a broker connection: until when retained `config/devices` entries are collected, and those seen.
    package var configSync: (until: Instant, seen: Set<String>)?
    /// Sessions of removed or renamed devices: the segment whose retained availability is cleared when they end.
    package var clearOnEnd: [String: String] = [:]
    /// `scan` requests (SPEC §14) under way: when each is answered, since when it listens, and its answer.
    package var scans: [PendingScan] = []
    /// Mapped peripherals are stored (a state file is configured).
    package let remembers: Bool
    package let startedAt: Instant

    package typealias RadioState = RuntimeCore.RadioState<Instant>
    package typealias DiscoveryState = RuntimeCore.DiscoveryState<Instant>
    package typealias AdapterPlacement = RuntimeCore.AdapterPlacement<Instant>
    package typealias HomeAssistantSchedule = RuntimeCore.HomeAssistantSchedule<Instant>

    package private(set) var bluezAvailable = false
    /// The adapters in use that BlueZ has or had, by name: power and scan.
    package var radios: [String: RadioState] = [:]
    /// Where each device goes among the adapters (only consulted with several adapters).
    package var placement: AdapterPlacement
    /// Devices with a running session (until its loop ended).
    package internal(set) var sessions: Set<String> = []
    /// The session's device path of each address with a session: one session per address, whatever the adapter.
    package internal(set) var sessionOf: [String: String] = [:]
    /// Addresses whose session was stopped to move: the adapter (name) its next session goes through.
    package var pendingMoves: [String: String] = [:]
    /// Stored peripherals whose `ConnectDevice` is under way: the path it creates (several adapters: no
    /// session through another adapter meanwhile).
    package var connectingStored: [String: String] = [:]
    /// Several adapters: devices heard by some adapters only, placed when this time comes (``placementWindow``).
    package var placingAt: [String: Instant] = [:]
    /// Devices whose placement window is over: placed where they are heard now.
    package var placeOpen: Set<String> = []
    /// The managed devices (the registry's content).
    package internal(set) var devices: [String: DeviceRecord] = [:]
    /// Stored peripherals (address, address type), in the state file's order.
    package var stored: [(address: String, addressType: String)] = []
    package var storedAddresses: Set<String> = []
    /// Stored peripherals BlueZ dropped: connect again at these times.
    package var reconnectStoredAt: [String: Instant] = [:]
    /// When `{base}/bridge/health` is published next.
    package private(set) var healthAt: Instant?
    /// Broker connections since start (health: `reconnects` is one less).
    package private(set) var brokerConnections = 0
    package internal(set) var stopping = false
    /// The shutdown gives up on sessions still running at this time.
    package internal(set) var shutdownDeadline: Instant?
    package internal(set) var finished = false
    /// Home Assistant discovery's timers: the legacy window, the resend of the last values.
    package private(set) var homeAssistant = HomeAssistantSchedule()
    /// The last `{base}/bridge/devices` payload published.
    package var lastDevicesPayload: [UInt8] = []
    /// The last snapshot of each managed device's BlueZ object an input's tree held (nil: BlueZ has none), by path:
    /// what `bridge/devices` shows of BlueZ's side (``SupervisorCore+DevicesList``).
    package var managedSnapshots: [String: DeviceSnapshot] = [:]
    /// With `cluster.enabled`: this bridge's part of the cluster (``SupervisorCore+Cluster``).
    package var cluster: ClusterCore<Instant>?
    /// When the cluster's next tick is due (kept once due until the tick: the cluster gives deadlines after now).
    package private(set) var clusterTickAt: Instant?
    /// Served devices whose objects the input that served them did not hold: served at an immediate tick.
    package var servedAwaitingObjects: Set<String> = []
    /// Served advertisement devices: their last advertisement told to the cluster.
    package var advertisersHeard: [String: Instant] = [:]
    /// The command roles last handed to intake.
    package var lastRoles = CommandRoles()
    /// Whether this bridge publishes each tracker's presence (cluster: ``SupervisorCore+Cluster``).
    package var trackersOwned: [String: Bool] = [:]
    /// The advertisement families `advertisements: decodable` asks (``AdvertisementDecoder/families``;
    /// tests add their own): the supervisor sets the advertisement router's.
    package var families: [any AdvertisementFamily.Type] = AdvertisementDecoder.families
    private var nextSeed: UInt64 = 0x5eed

    /// How long the shutdown waits for the sessions to disconnect.
    package static var stopTimeout: Duration { .seconds(3) }
    /// How long after BlueZ dropped a stored peripheral it is connected again.
    package static var storedReconnectDelay: Duration { .seconds(1) }

    package init(config: BridgeConfig, now: Instant) {
        self.config = config
        fixedDevices = config.devices
        topics = TopicMapper(config: config)
        remembers = config.stateFile != nil
        startedAt = now
        placement = AdapterPlacement(rule: config.cluster.switchRule)
        if config.cluster.enabled {
            cluster = ClusterCore(
                settings: ClusterSettings(config: config), baseTopic: topics.baseTopic,
                trackers: Set(config.trackers.map(\.name)))
        }
    }

    /// The earliest time the core wants a ``Event/tick(lastAdvertisement:)``.
    package var nextDeadline: Instant? {
        if stopping { return finished ? nil : shutdownDeadline }
        var deadlines: [Instant?] = [reconnectStoredAt.values.min(), healthAt, homeAssistant.nextDeadline]
        for radio in radios.values {
            deadlines += [radio.discovery.retryAt, radio.discovery.watchdogAt, radio.discovery.heldUntil]
        }
        if severalAdapters { deadlines += [placement.nextDeadline, placingAt.values.min()] }
        deadlines.append(clusterTickAt)
        deadlines.append(configSync?.until)
        deadlines += scans.map(\.until)
        // Served devices waiting for their objects: at once.
        if !servedAwaitingObjects.isEmpty { deadlines.append(startedAt) }
        return deadlines.compactMap { $0 }.min()
    }

    /// The device paths whose snapshots a ``Event/tick(lastAdvertisement:)`` at `now` needs.
    package func pathsNeeded(at now: Instant) -> [String] {
        var paths: [String] = []
        for address in reconnectStoredAt.filter({ $0.value <= now }).keys.sorted() {
            paths += knownAdapters.map { BlueZNames.devicePath(adapterName: $0, address: address) }
        }
        if severalAdapters, let due = placement.nextDeadline, due <= now { paths += sessionOf.values.sorted() }
        for address in placingAt.filter({ $0.value <= now }).keys.sorted() {
            paths += knownAdapters.map { BlueZNames.devicePath(adapterName: $0, address: address) }
        }
        return paths + clusterPathsNeeded
    }

    /// Whether a ``Event/deviceChanged(path:_:)`` with these property names needs the device's snapshot.
    package func needsSnapshot(path: String, changed: [String]) -> Bool {
        sessions.contains(path) || changed.contains("UUIDs") || changed.contains("Name") || changed.contains("Alias")
            || (config.bluetooth.advertisements == .decodable
                && (changed.contains("ServiceData") || changed.contains("ManufacturerData")))
            // Several adapters: a device with a session heard elsewhere may move (SPEC §10).
            || (severalAdapters && changed.contains("RSSI") && sessionOf[BlueZNames.address(fromDevicePath: path)] != nil)
            // A cluster member reports what it hears of the wanted devices.
            || (changed.contains("RSSI") && clusterHears(path: path))
    }

    /// The managed device with this segment or address (`bridge/request/forget`, `reconnect`).
    package func find(_ target: String) -> DeviceRecord? {
        let address = BluetoothAddress(target)
        return devices.values.sorted { $0.segment < $1.segment }
            .first { $0.segment == target || (address != nil && $0.address == address) }
    }

    /// Whether the peripheral is stored.
    package func isStored(_ address: String) -> Bool { storedAddresses.contains(address) }

    /// Whether advertisements are listened to: a device has `connection: advertisement`,
    /// `bluetooth.advertisements` is `decodable`, or trackers are configured (SPEC §12).
    package var listensToAdvertisements: Bool {
        config.bluetooth.advertisements == .decodable || !config.trackers.isEmpty
            || config.devices.contains { if case .advertisement = $0.connection { true } else { false } }
    }

    // MARK: Inputs

    /// Handles one input at `now` (`unixTime`: the wall clock, for the cluster's payloads), with what the executor
    /// read of the tree, and returns the actions to perform, in order.
    package mutating func handle(_ event: Event, now: Instant, tree: Tree, unixTime: Int64 = 0) -> [Action] {
        var out: [Action] = []
        if stopping {
            handleWhileStopping(event, now: now, &out)
            return out
        }
        bluezAvailable = tree.bluezAvailable
        noteObjects(tree)
        let wanted = cluster?.ownership.wanted.count ?? 0
        handle(event, now: now, tree: tree, unixTime: unixTime, &out)
        if let cluster, !stopping {
            // Devices wanted during this input: one cluster step decides on them.
            if cluster.ownership.wanted.count != wanted {
                clusterStep(.tick, now: now, unixTime: unixTime, tree: tree, &out)
            }
            if clusterTickAt.map({ $0 > now }) ?? true { clusterTickAt = self.cluster?.nextDeadline(after: now) }
        } else if stopping {
            clusterTickAt = nil
        }
        return out
    }

    private mutating func handle(_ event: Event, now: Instant, tree: Tree, unixTime: Int64, _ out: inout [Action]) {
        switch event {
        case .started(let peripherals):
            for p in peripherals where storedAddresses.insert(p.address).inserted {
                stored.append((p.address, p.addressType))
            }
            if let interval = config.health.interval { healthAt = now.advanced(by: interval) }
            clusterWantKnown(&out)
        case .bluezAvailable:
            // (Again after a bluetoothd restart: it forgot the agents of its earlier life.)
            if config.bluetooth.agent { out.append(.registerAgent) }
            adapterCheck(adaptersInUse(tree), now: now, tree: tree, &out)
        case .bluezLost:
            for name in radios.keys.sorted() { adapterLost(name) }
            connectingStored.removeAll()
            for path in sessions.sorted() { out.append(.send(path: path, .deviceRemoved)) }
        case .adapterAdded(let name):
            if uses(name) { adapterCheck([name], now: now, tree: tree, &out) }
        case .adapterRemoved(let name):
            guard uses(name) else { break }
            out.append(.log(.error, "adapter \(name) was removed"))
            adapterDown(name, &out)
        case .adapterChanged(let name, let changed):
            if uses(name) { adapterChanged(name, changed, now: now, tree: tree, &out) }
        case .deviceAdded(let path):
            radios[BlueZNames.adapterName(of: path)]?.discovery.lastAdvertisement = now
            consider(path, now: now, tree: tree, &out)
            clusterHeard(path, now: now, unixTime: unixTime, tree: tree, &out)
        case .deviceRemoved(let path):
            if devices[path] != nil { managedSnapshots[path] = nil }
            deviceRemoved(path, now: now, &out)
        case .deviceChanged(let path, let changed):
            deviceChanged(path, changed, now: now, tree: tree, &out)
            if severalAdapters && changed.contains("RSSI") {
                review(BlueZNames.address(fromDevicePath: path), now: now, tree: tree, &out)
            }
            if changed.contains("RSSI") { clusterHeard(path, now: now, unixTime: unixTime, tree: tree, &out) }
        case .gattObjectsChanged(let device):
            if sessions.contains(device) { out.append(.send(path: device, .gattObjectsChanged)) }
        case .notificationsReleased(let characteristic):
            if let device = BlueZNames.devicePath(of: characteristic), sessions.contains(device) {
                out.append(.send(path: device, .notificationsReleased(characteristic: characteristic)))
            }
        case .brokerConnected:
            brokerConnected(now: now, &out)
            configSync = (now.advanced(by: Self.configSyncWindow), [])
            clusterBrokerConnected(now: now, unixTime: unixTime, tree: tree, &out)
            if !config.trackers.isEmpty { out.append(.presenceBroker(up: true)) }
        case .brokerDisconnected:
            clusterStep(.brokerDisconnected, now: now, unixTime: unixTime, tree: tree, &out)
            if !config.trackers.isEmpty { out.append(.presenceBroker(up: false)) }
        case .configDevice(let segment, let payload):
            configDevice(segment, payload: payload, now: now, tree: tree, &out)
        case .clusterMessage(let topic, let payload):
            clusterStep(.message(topic, payload: payload), now: now, unixTime: unixTime, tree: tree, &out)
        case .trackerHeard(let segment, let address, let adapter, let rssi):
            clusterStep(
                .trackerHeard(segment: segment, address: address, adapter: adapter, rssi: rssi), now: now,
                unixTime: unixTime, tree: tree, &out)
        case .homeAssistantOnline:
            homeAssistantRepublish(reason: "Home Assistant is online", now: now, &out)
        case .homeAssistantSent(let segments):
            homeAssistant.sent(devices: segments, now: now)
        case .request(let command, let payload, let replyTo):
            request(command, payload: payload, replyTo: replyTo, now: now, tree: tree, &out)
        case .paired(let path):
            // Its paired and bonded flags changed (the tree holds its object).
            if devices[path] != nil { listDevices(force: false, &out) }
        case .legacyDiscovery(let topic):
            out.append(.clearLegacyDiscovery(topic: topic))
        case .availability, .linkChanged, .connectReturned, .mapped, .advertised, .unreadable:
            report(event, now: now, tree: tree, &out)
            if case .linkChanged(let path, let up) = event {
                clusterLink(path, up: up, now: now, unixTime: unixTime, tree: tree, &out)
            }
        case .sessionEnded(let path):
            clusterLink(path, up: false, now: now, unixTime: unixTime, tree: tree, &out)
            sessionEnded(path)
            clearAfterSession(path, &out)
            if cluster != nil { out.append(.homeAssistantForget(path: path)) }
            out.append(.log(.debug, "the session of \(path) ended"))
            if let record = removeRecord(path) {
                out.append(.unregister(path: path))
                if record.available { out.append(.publishAvailability(segment: record.segment, online: false)) }
            }
            listDevices(force: false, &out)
            // The device object may be back already (removed and found again while it ended), or the device
            // moves to another adapter.
            reconsider(path, now: now, tree: tree, &out)
        case .storedConnectReturned(let path):
            if connectingStored[BlueZNames.address(fromDevicePath: path)] == path {
                connectingStored[BlueZNames.address(fromDevicePath: path)] = nil
            }
            storedConnectReturned(path, now: now, tree: tree, &out)
        case .powerFinished(let name, let error):
            radios[name, default: RadioState()].poweringOn = false
            if let error { out.append(.log(.error, "cannot power on \(name): \(error)")) }
        case .discoveryFinished(let name, let error):
            discoveryFinished(name, error, now: now, tree: tree, &out)
        case .monitorRegistered(let name, let error):
            monitorRegistered(name, error, now: now, tree: tree, &out)
        case .tick(let lastAdvertisement, let advertisers):
            tick(now: now, tree: tree, lastAdvertisement: lastAdvertisement, &out)
            serveAwaiting(now: now, tree: tree, &out)
            if let until = configSync?.until, until <= now { configSyncEnded(now: now, tree: tree, &out) }
            answerScans(now: now, tree: tree, &out)
            if let at = clusterTickAt, at <= now {
                clusterTickAt = nil
                clusterTick(advertisers: advertisers, now: now, unixTime: unixTime, tree: tree, &out)
            }
        case .stop:
            beginShutdown(now: now, &out)
            if sessions.isEmpty { finish(&out) }
        case .inboxClosed:
            beginShutdown(now: now, &out)
            giveUp(&out)
        }
    }

    private mutating func tick(now: Instant, tree: Tree, lastAdvertisement: Instant?, _ out: inout [Action]) {
        for name in radios.keys.sorted() {
            if let at = radios[name]?.discovery.retryAt, at <= now {
                radios[name]?.discovery.retryAt = nil
                ensureDiscovery(name, tree: tree, &out)
            }
            if let at = radios[name]?.discovery.heldUntil, at <= now {
                radios[name]?.discovery.heldUntil = nil
                storedConnectReturned(nil, adapter: name, now: now, tree: tree, &out)
            }
            if let at = radios[name]?.discovery.watchdogAt, at <= now {
                scanWatchdog(name, now: now, tree: tree, lastAdvertisement: lastAdvertisement, &out)
            }
        }
        if severalAdapters, let at = placement.nextDeadline, at <= now {
            for address in sessionOf.keys.sorted() { review(address, now: now, tree: tree, &out) }
        }
        for (address, at) in placingAt.sorted(by: { $0.key < $1.key }) where at <= now {
            placingAt[address] = nil
            placeOpen.insert(address)
            if let first = objects(of: address, tree: tree).first { consider(first.path, now: now, tree: tree, &out) }
        }
        if let at = healthAt, at <= now, let interval = config.health.interval {
            healthAt = now.advanced(by: interval)
            out.append(.publishHealth)
        }
        for (address, at) in reconnectStoredAt.sorted(by: { $0.key < $1.key }) where at <= now {
            reconnectStoredAt[address] = nil
            connectStored(only: address, now: now, tree: tree, &out)
        }
        if homeAssistant.releaseDue(now: now) { out.append(.homeAssistantReleaseHeld) }
        if let segments = homeAssistant.resendDue(now: now) { out.append(.resendLastValues(devices: segments)) }
    }

    /// Every discovery config again (the first time, the legacy window starts); the last values follow.
    private mutating func homeAssistantRepublish(reason: String, now: Instant, _ out: inout [Action]) {
        out.append(.homeAssistantRepublish(reason: reason, startHold: homeAssistant.republish(now: now)))
    }

    private mutating func brokerConnected(now: Instant, _ out: inout [Action]) {
        brokerConnections += 1
        out.append(.log(.info, "MQTT connected: publishing bridge state"))
        out.append(.publishBridgeState(online: true))
        for record in devices.values.sorted(by: { $0.segment < $1.segment }) {
            out.append(.publishAvailability(segment: record.segment, online: record.available))
        }
        listDevices(force: true, &out)
        if config.homeAssistant.discovery { homeAssistantRepublish(reason: "connected to the broker", now: now, &out) }
        out.append(.flushHeldValues)
    }

    /// A new jitter seed for a session's backoff.
    package mutating func makeSeed() -> UInt64 {
        nextSeed &+= 0x9E37_79B9_7F4A_7C15
        return nextSeed
    }
}
