import BlueZ
import BridgeCore
import DBusKit
import Logging
import MQTT

/// The bridge's control loop: follows BlueZ's object tree, keeps the scan running, drives one
/// ``DeviceConnectionStateMachine`` per wanted peripheral, subscribes and reads their
/// characteristics, and publishes availability, the device list and the bridge state.
///
/// Values themselves do not pass through here: ``ValueRouter`` publishes them straight from
/// the D-Bus signal task.
actor BridgeEngine {
    typealias Machine = DeviceConnectionStateMachine<ContinuousClock.Instant>

    /// What the loop reacts to, in arrival order.
    enum Input: Sendable {
        case bluez(BlueZEvent)
        case machine(path: String, event: Machine.Event)
        case tick(path: String, generation: Int)
        case mqttConnected
        case retryDiscovery
        case request(command: String, message: MQTTMessage)
        case reconnectKnown(address: String)
        /// GATT objects of a device appeared; `count` is how many it had then (see ``scheduleGattCheck(_:)``).
        case gattCheck(path: String, count: Int)
        case watchdog
        /// Home Assistant announced `online` on `{prefix}/status`: publish the discovery configs again.
        case homeAssistantOnline
        case stop
    }

    /// A peripheral the bridge manages.
    struct ManagedDevice {
        var path: String
        var address: BluetoothAddress
        var addressType: String
        var segment: String
        var config: BridgeConfig.Device?
        var machine: Machine
        var available = false
        var tickGeneration = 0
        var pollTasks: [Task<Void, Never>] = []
        var notifying: [String] = []
        /// Characteristic objects already mapped to topics during this connection.
        var mapped: Set<String> = []
        /// When the last GATT object of the device appeared (see ``checkGatt(_:)``).
        var lastGattObjectAt: ContinuousClock.Instant?
        /// When `ServicesResolved` last became true.
        var resolvedAt: ContinuousClock.Instant?
        /// Whether ``checkGatt(_:)`` already said that some services never appeared.
        var reportedMissingServices = false
    }

    let config: BridgeConfig
    let topics: TopicMapper
    let logger: Logger
    let mqtt: MQTTClient
    let bluez: BlueZClient
    let router: ValueRouter
    let directory = DeviceDirectory()
    let clock = ContinuousClock()
    private let inputs: AsyncStream<Input>
    private let inputContinuation: AsyncStream<Input>.Continuation

    var devices: [String: ManagedDevice] = [:]
    var adapterReady = false
    private var discoveryWanted = false
    private var discoveryStarting = false
    private var nextSeed: UInt64 = 0x5eed
    private var lastDevicesPayload: [UInt8] = []
    let stateFile: StateFile?
    var known = KnownPeripherals()
    var knownAddresses: Set<String> = []
    let startedAt = ContinuousClock.now
    var awaitingFirstValue: Set<String> = []

    init(config: BridgeConfig, mqtt: MQTTClient, bluez: BlueZClient, logger: Logger) {
        self.config = config
        self.topics = TopicMapper(config: config)
        self.logger = logger
        self.mqtt = mqtt
        self.bluez = bluez
        self.router = ValueRouter(mqtt: mqtt)
        self.stateFile = config.stateFile.map { StateFile(path: $0, logger: logger) }
        (inputs, inputContinuation) = AsyncStream<Input>.makeStream(bufferingPolicy: .unbounded)
    }

    nonisolated func send(_ input: Input) {
        inputContinuation.yield(input)
    }

    /// Asks the loop to shut down cleanly.
    nonisolated func requestStop() {
        inputContinuation.yield(.stop)
    }

    var adapterPath: String { config.bluetooth.adapterPath }

    // MARK: Loop

    /// Runs until ``requestStop()``; then publishes `offline`, stops notifications and disconnects.
    func run() async {
        let router = self.router
        bluez.setValueHandler { path, value in router.handle(path: path, value: value) }
        let forwardBlueZ = Task { [bluez, inputContinuation] in
            for await e in bluez.events { inputContinuation.yield(.bluez(e)) }
        }
        let forwardMQTT = Task { [mqtt, inputContinuation] in
            for await e in mqtt.events {
                if case .connected = e { inputContinuation.yield(.mqttConnected) }
            }
        }
        defer {
            forwardBlueZ.cancel()
            forwardMQTT.cancel()
        }
        if let stateFile {
            known = stateFile.load()
            knownAddresses = Set(known.peripherals.map(\.address))
            for p in known.peripherals {
                for uuid in p.unreadable { unreadable.insert(p.address + " " + uuid) }
            }
        }
        await bluez.start()
        if !bluez.isAvailable {
            logger.warning("org.bluez is not on the D-Bus: waiting for BlueZ (bluetoothd) to start")
        }
        for await input in inputs {
            if case .stop = input { break }
            await handle(input)
        }
        await shutdown()
    }

    private func handle(_ input: Input) async {
        switch input {
        case .bluez(let e):
            await handleBlueZ(e)
        case .machine(let path, let event):
            feed(path, event)
        case .tick(let path, let generation):
            guard devices[path]?.tickGeneration == generation else { return }
            feed(path, .tick)
        case .mqttConnected:
            publishRetainedState()
            republishDiscovery(reason: "connected to the broker")
            let (sent, dropped) = router.flushHeld()
            if sent > 0 || dropped > 0 {
                logger.notice("broker back: published \(sent) values held while it was away; \(dropped) older values were replaced by newer ones")
            }
        case .request(let command, let message):
            await handleRequest(command, message)
        case .reconnectKnown(let address):
            connectKnownPeripherals(only: address)
        case .gattCheck(let path, let count):
            if gattObjectCount(path) == count { checkGatt(path) }
        case .homeAssistantOnline:
            republishDiscovery(reason: "Home Assistant is online")
        case .watchdog:
            await scanWatchdog()
        case .retryDiscovery:
            await ensureDiscovery()
        case .stop:
            break
        }
    }

    // MARK: BlueZ events

    private func handleBlueZ(_ e: BlueZEvent) async {
        switch e {
        case .serviceAvailable:
            logger.info("BlueZ is on the D-Bus; \(bluez.tree.objects.count) objects")
            await adapterCheck()
        case .serviceLost:
            adapterReady = false
            discoveryWanted = false
            discoveryOurs = false
            for path in Array(devices.keys) { feed(path, .deviceRemoved) }
        case .interfacesAdded(let path, let ifaces):
            if ifaces.contains(BlueZ.adapter), path == adapterPath {
                await adapterCheck()
            }
            if ifaces.contains(BlueZ.device) {
                lastAdvertisement = clock.now
                consider(path)
            }
            if ifaces.contains(BlueZ.gattService) || ifaces.contains(BlueZ.gattCharacteristic) {
                if let dev = devicePath(of: path), devices[dev] != nil {
                    devices[dev]?.lastGattObjectAt = clock.now
                    scheduleGattCheck(dev)
                }
            }
        case .interfacesRemoved(let path, let ifaces):
            if ifaces.contains(BlueZ.adapter), path == adapterPath {
                logger.error("adapter \(config.bluetooth.adapter) was removed")
                adapterReady = false
                discoveryWanted = false
                discoveryOurs = false
            }
            if ifaces.contains(BlueZ.device), let dev = devices[path] {
                logger.notice("BlueZ dropped device \(dev.address) from its tree: rediscovering it")
                feed(path, .deviceRemoved)
                if knownAddresses.contains(dev.address.description) {
                    Task { [inputContinuation] in
                        try? await Task.sleep(for: .seconds(1))
                        inputContinuation.yield(.reconnectKnown(address: dev.address.description))
                    }
                }
                await updateDiscovery()
            }
        case .propertiesChanged(let path, let iface, let changed):
            switch iface {
            case BlueZ.adapter where path == adapterPath:
                if changed.contains("Powered") {
                    let powered = bluez.tree.properties(path: path, interface: BlueZ.adapter)?["Powered"]?.bool ?? false
                    if powered != adapterReady {
                        logger.notice("adapter \(config.bluetooth.adapter) powered \(powered ? "on" : "off")")
                        await adapterCheck()
                    }
                }
                if changed.contains("Discovering") {
                    let discovering = bluez.tree.properties(path: path, interface: BlueZ.adapter)?["Discovering"]?.bool ?? false
                    if !discovering { discoveryOurs = false }
                    if !discovering && discoveryWanted && adapterReady && discoveryNeeded() {
                        logger.info("discovery stopped behind our back: restarting it")
                        scheduleDiscoveryRetry(after: .seconds(1))
                    }
                }
            case BlueZ.device:
                if changed.contains("RSSI") || changed.contains("ManufacturerData") || changed.contains("ServiceData") {
                    lastAdvertisement = clock.now
                }
                if devices[path] == nil {
                    if changed.contains("UUIDs") || changed.contains("Name") || changed.contains("Alias") {
                        consider(path)
                    }
                    return
                }
                guard let dev = bluez.tree.device(path) else { return }
                if changed.contains("Connected") {
                    feed(path, .connectedChanged(dev.connected))
                }
                if changed.contains("ServicesResolved") {
                    if dev.servicesResolved {
                        devices[path]?.resolvedAt = clock.now
                        devices[path]?.reportedMissingServices = false
                    }
                    feed(path, .servicesResolved(dev.servicesResolved))
                    if dev.servicesResolved { checkGatt(path) }
                }
            default:
                break
            }
        }
    }

    private func devicePath(of path: String) -> String? {
        // /org/bluez/hciN/dev_XX_XX_XX_XX_XX_XX/...
        let parts = path.split(separator: "/", omittingEmptySubsequences: true)
        guard parts.count >= 4, parts[3].hasPrefix("dev_") else { return nil }
        return "/" + parts[0..<4].joined(separator: "/")
    }

    /// How long no GATT object may have appeared before a device's objects count as complete.
    static let gattQuietPeriod: Duration = .milliseconds(250)
    /// How long after `ServicesResolved` to wait for services that `UUIDs` names but that have no
    /// object yet, before going on without them.
    static let missingServicesGrace: Duration = .seconds(3)
    /// Services BlueZ lists in `UUIDs` but exports no object for: GAP (bluetoothd's own) and HID
    /// 1812 (claimed by its HoG plugin).
    static let unexportedServices: Set<String> = [
        "00001800-0000-1000-8000-00805f9b34fb", "00001812-0000-1000-8000-00805f9b34fb",
    ]

    /// BlueZ 5.66 exports GATT objects one `InterfacesAdded` at a time, before or after
    /// `ServicesResolved` (real stack: up to a second after it). A check runs once none has been
    /// added for ``gattQuietPeriod`` (see ``checkGatt(_:)``).
    private func scheduleGattCheck(_ path: String, after delay: Duration = BridgeEngine.gattQuietPeriod) {
        let count = gattObjectCount(path)
        Task { [inputContinuation] in
            try? await Task.sleep(for: delay)
            inputContinuation.yield(.gattCheck(path: path, count: count))
        }
    }

    private func gattObjectCount(_ path: String) -> Int {
        let tree = bluez.tree
        return tree.services(device: path).reduce(0) { $0 + 1 + tree.characteristics(service: $1.path).count }
    }

    /// Decides whether a resolved device's GATT objects are complete: `ServicesResolved` is true,
    /// every service in `UUIDs` (but those BlueZ keeps to itself) has its object (or ``missingServicesGrace`` passed), and
    /// no object appeared in the last ``gattQuietPeriod``. Objects that appear after the device
    /// was subscribed are mapped and subscribed on their own (``subscribe(_:onlyNew:)``).
    private func checkGatt(_ path: String) {
        guard let dev = devices[path], let device = bluez.tree.device(path), device.servicesResolved else { return }
        let now = clock.now
        if let last = dev.lastGattObjectAt, last.duration(to: now) < Self.gattQuietPeriod {
            return  // the check scheduled by the last InterfacesAdded follows
        }
        let services = bluez.tree.services(device: path)
        guard !services.isEmpty else { return }
        let exported = Set(services.map(\.uuid))
        let missing = device.uuids.filter { !Self.unexportedServices.contains($0) && !exported.contains($0) }
        if !missing.isEmpty && !dev.reportedMissingServices {
            let waited = dev.resolvedAt.map { $0.duration(to: now) } ?? Self.missingServicesGrace
            if waited < Self.missingServicesGrace {
                scheduleGattCheck(path)
                return
            }
            devices[path]?.reportedMissingServices = true
            logger.notice(
                "\(dev.address): no GATT objects for \(missing.joined(separator: ", ")) \(Int(waited.components.seconds)) s after ServicesResolved; going on without them")
        }
        if !dev.machine.gattObjectsPresent {
            feed(path, .gattObjectsPresent)
        } else if dev.machine.isReady {
            let unmapped = services.contains { service in
                bluez.tree.characteristics(service: service.path).contains { !dev.mapped.contains($0.path) }
            }
            if unmapped { Task { await self.subscribe(path, onlyNew: true) } }
        }
    }

    // MARK: Adapter and discovery

    private func adapterCheck() async {
        guard bluez.isAvailable else { return }
        guard let props = bluez.tree.properties(path: adapterPath, interface: BlueZ.adapter) else {
            let have = bluez.tree.paths(with: BlueZ.adapter)
            logger.error(
                "adapter \(config.bluetooth.adapter) (\(adapterPath)) not found; BlueZ has: \(have.isEmpty ? "no adapters" : have.joined(separator: ", ")). Waiting for it.")
            adapterReady = false
            return
        }
        if props["Powered"]?.bool != true {
            logger.notice("adapter \(config.bluetooth.adapter) is powered off: powering it on")
            do {
                try await bluez.setProperty(adapterPath, interface: BlueZ.adapter, name: "Powered", value: .bool(true))
            } catch {
                logger.error("cannot power on \(config.bluetooth.adapter): \(error)")
            }
            adapterReady = false
            return  // The Powered change brings us back here.
        }
        if !adapterReady {
            adapterReady = true
            logger.info("adapter \(config.bluetooth.adapter) (\(props["Address"]?.string ?? "?")) is powered")
            // Stored peripherals first, without waiting for a scan result.
            connectKnownPeripherals()
            // Devices BlueZ already knows.
            for dev in bluez.tree.devices(adapter: adapterPath) { consider(dev.path) }
            discoveryWanted = true
            startWatchdog()
            await ensureDiscovery()
        }
    }

    private func scheduleDiscoveryRetry(after delay: Duration) {
        Task { [inputContinuation] in
            try? await Task.sleep(for: delay)
            inputContinuation.yield(.retryDiscovery)
        }
    }

    private func ensureDiscovery() async {
        guard adapterReady, discoveryWanted, !discoveryStarting, discoveryNeeded() else { return }
        if bluez.tree.properties(path: adapterPath, interface: BlueZ.adapter)?["Discovering"]?.bool == true,
           discoveryOurs
        {
            return
        }
        discoveryStarting = true
        defer { discoveryStarting = false }
        // A UUID filter hides peripherals that `devices` entries match by name or address.
        let uuids = config.devices.isEmpty ? config.bluetooth.services.map(\.uuidString) : []
        do {
            try await bluez.setDiscoveryFilter(adapter: adapterPath, uuids: uuids)
        } catch {
            logger.warning("SetDiscoveryFilter failed: \(error)")
        }
        do {
            try await bluez.startDiscovery(adapter: adapterPath)
            discoveryOurs = true
            // The watchdog measures the silence of this scan, not the time since the last one.
            lastAdvertisement = clock.now
            logger.info(
                "scanning on \(config.bluetooth.adapter) for \(uuids.isEmpty ? "all LE peripherals" : "services " + config.bluetooth.services.map(\.shortForm).joined(separator: ", "))")
        } catch {
            if error.code == .inProgress,
               bluez.tree.properties(path: adapterPath, interface: BlueZ.adapter)?["Discovering"]?.bool == true
            {
                // Our own session is still running (its Discovering=false came late): keep it.
                discoveryOurs = true
                logger.debug("StartDiscovery: InProgress while discovering; keeping the running scan")
            } else if error.code == .inProgress {
                logger.notice("StartDiscovery: InProgress; stopping the scan and retrying")
                try? await bluez.stopDiscovery(adapter: adapterPath)
                scheduleDiscoveryRetry(after: .seconds(1))
            } else {
                logger.warning("StartDiscovery failed: \(error); retrying in 5 s")
                scheduleDiscoveryRetry(after: .seconds(5))
            }
        }
    }

    private var discoveryOurs = false
    /// Characteristics (address + UUID) whose reads BlueZ refused for lack of pairing.
    private var unreadable: Set<String> = []

    /// Whether a failed read means the characteristic needs pairing. `linkDropped`: the device's
    /// services were no longer resolved when the error came (5.66 drops the link after a failed
    /// pairing and signals that before the error reply).
    static func isSecurityRefusal(_ error: BlueZError, linkDropped: Bool) -> Bool {
        if error.code == .notAuthorized || error.code == .authenticationFailed { return true }
        let m = error.message.lowercased()
        // ATT: 0x05 insufficient authentication, 0x08 authorization, 0x0c key size, 0x0f insufficient
        // encryption. 0x0e "unlikely error" is what 5.66 reports after a failed pairing, but a
        // device may send it for anything: it counts only when the link went down with it.
        for code in ["0x05", "0x08", "0x0c", "0x0f"] where m.contains("att error: \(code)") { return true }
        if linkDropped && m.contains("att error: 0x0e") { return true }
        return m.contains("authentication") || m.contains("encryption")
    }
    private var lastAdvertisement = ContinuousClock.now
    private var watchdogTask: Task<Void, Never>?

    /// Whether a wanted peripheral is missing (SPEC §5): with a service filter or a name
    /// pattern every new advertiser may be wanted, so the scan keeps running; when every wanted
    /// peripheral is named by address and connected, it stops.
    func discoveryNeeded() -> Bool {
        if !config.bluetooth.services.isEmpty { return true }
        var addresses = knownAddresses
        for d in config.devices {
            switch d.match {
            case .name: return true
            case .address(let a): addresses.insert(a.description)
            }
        }
        let online = Set(devices.values.filter(\.available).map(\.address.description))
        return !addresses.isSubset(of: online)
    }

    /// Starts or stops the scan as ``discoveryNeeded()`` says.
    func updateDiscovery() async {
        guard adapterReady, discoveryWanted else { return }
        if discoveryNeeded() {
            await ensureDiscovery()
        } else if discoveryOurs {
            logger.info("every wanted peripheral is connected: stopping the scan")
            discoveryOurs = false
            do { try await bluez.stopDiscovery(adapter: adapterPath) } catch {
                logger.debug("StopDiscovery: \(error)")
            }
        }
    }

    /// Restarts a scan that has seen nothing for a long time while peripherals are missing.
    private func scanWatchdog() async {
        let period = config.bluetooth.scanWatchdog ?? .seconds(60)
        guard adapterReady, discoveryWanted, discoveryOurs, discoveryNeeded() else { return }
        // Missing: a managed device that is not online, or a wanted address (configured or stored)
        // that is not online, e.g. one BlueZ dropped from its tree, which only the scan finds again.
        var wanted = knownAddresses
        for d in config.devices { if case .address(let a) = d.match { wanted.insert(a.description) } }
        let online = Set(devices.values.filter(\.available).map(\.address.description))
        let missing = devices.isEmpty || devices.values.contains { !$0.available } || !wanted.isSubset(of: online)
        guard missing, clock.now - lastAdvertisement > period else { return }
        logger.warning("scan watchdog: no advertisement for \(period) while peripherals are missing; restarting the scan")
        lastAdvertisement = clock.now
        discoveryOurs = false
        try? await bluez.stopDiscovery(adapter: adapterPath)
        await ensureDiscovery()
    }

    private func startWatchdog() {
        guard watchdogTask == nil else { return }
        let period = config.bluetooth.scanWatchdog ?? .seconds(60)
        watchdogTask = Task { [inputContinuation] in
            while !Task.isCancelled {
                try? await Task.sleep(for: period / 4)
                inputContinuation.yield(.watchdog)
            }
        }
    }

    // MARK: Devices

    /// Starts managing a device if the configuration wants it.
    func consider(_ path: String) {
        guard devices[path] == nil, adapterReady, let dev = bluez.tree.device(path),
              path.hasPrefix(adapterPath + "/"), let address = BluetoothAddress(dev.address)
        else { return }
        let name = dev.name ?? dev.alias
        let deviceConfig = config.device(address: address, name: name)
        let wantedServices = Set(config.bluetooth.services.map(\.uuidString))
        let advertises = dev.uuids.contains { wantedServices.contains($0) }
        guard deviceConfig != nil || advertises || knownAddresses.contains(address.description) else {
            logger.trace("ignoring \(dev.address) (\(name ?? "no name")): no wanted service")
            return
        }
        let segment = topics.deviceSegment(address: address, config: deviceConfig)
        nextSeed &+= 0x9E37_79B9_7F4A_7C15
        var managed = ManagedDevice(
            path: path, address: address, addressType: dev.addressType, segment: segment, config: deviceConfig,
            machine: Machine(configuration: .init(reconnect: config.reconnect), seed: nextSeed))
        managed.available = false
        devices[path] = managed
        directory.addDevice(segment: segment, path: path)
        logger.info("found \(address) (\(name ?? "no name")) → \(topics.baseTopic)/\(segment)")
        publish(topics.availability(device: segment), "offline", retain: true)
        publishDevices()
        if dev.connected {
            feed(path, .connectedChanged(true))
            if dev.servicesResolved { feed(path, .servicesResolved(true)) }
            checkGatt(path)
        } else {
            feed(path, .discovered)
        }
    }

    func feed(_ path: String, _ event: Machine.Event) {
        guard var dev = devices[path] else { return }
        let before = dev.machine.state
        let actions = dev.machine.handle(event, now: clock.now)
        devices[path] = dev
        if before != dev.machine.state {
            logger.debug("\(dev.address): \(event) → \(Self.describe(dev.machine.state))")
        }
        for a in actions { perform(a, path) }
        if event == .deviceRemoved {
            stopManaging(path)
        }
    }

    func stopManaging(_ path: String) {
        guard let dev = devices.removeValue(forKey: path) else { return }
        for t in dev.pollTasks { t.cancel() }
        router.removeRoutes(below: path)
        if dev.available {
            publish(topics.availability(device: dev.segment), "offline", retain: true)
        }
        publishDevices()
    }

    private func perform(_ action: Machine.Action, _ path: String) {
        guard let dev = devices[path] else { return }
        switch action {
        case .connect:
            logger.info("connecting to \(dev.address)")
            Task { [bluez, inputContinuation, logger] in
                do throws(BlueZError) {
                    try await bluez.connect(device: path)
                    inputContinuation.yield(.machine(path: path, event: .connectSucceeded))
                } catch {
                    if error.code == .alreadyConnected {
                        inputContinuation.yield(.machine(path: path, event: .connectSucceeded))
                        return
                    }
                    logger.warning("connect to \(dev.address) failed: \(error)")
                    inputContinuation.yield(.machine(
                        path: path, event: .connectFailed(ConnectErrorClass(errorName: error.name, message: error.message))))
                }
            }
        case .disconnect:
            logger.info("disconnecting \(dev.address)")
            Task { [bluez, logger] in
                do { try await bluez.disconnect(device: path) } catch {
                    logger.debug("disconnect \(dev.address): \(error)")
                }
            }
        case .waitForDisconnect:
            logger.debug("\(dev.address): waiting for Connected=false before retrying")
        case .startSubscribing:
            Task { await self.subscribe(path, onlyNew: false) }
        case .publishAvailability(let online):
            devices[path]?.available = online
            directory.setReady(segment: dev.segment, online)
            if !online {
                for t in dev.pollTasks { t.cancel() }
                devices[path]?.pollTasks = []
                devices[path]?.notifying = []
                devices[path]?.mapped = []
            }
            logger.info("\(dev.address) is \(online ? "online" : "offline")")
            publish(topics.availability(device: dev.segment), online ? "online" : "offline", retain: true)
            publishDevices()
            Task { await self.updateDiscovery() }
        case .scheduleTick(let at):
            devices[path]?.tickGeneration += 1
            let generation = devices[path]!.tickGeneration
            Task { [inputContinuation, clock] in
                try? await clock.sleep(until: at)
                inputContinuation.yield(.tick(path: path, generation: generation))
            }
        }
    }

    /// Maps a connected device's characteristics to topics, subscribes to those that notify and
    /// reads those that are readable. `onlyNew`: only those not mapped yet during this connection
    /// (objects BlueZ exported after the device was subscribed); the device stays ready.
    private func subscribe(_ path: String, onlyNew: Bool) async {
        guard let dev = devices[path] else { return }
        let tree = bluez.tree
        let known = onlyNew ? dev.mapped : []
        if !onlyNew { directory.setCharacteristics(segment: dev.segment, [:]) }
        var notifyPaths: [String] = []
        var readPaths: [String] = []
        var polls: [(String, Duration)] = []
        var commandMap: [DeviceDirectory.Key: DeviceDirectory.Characteristic] = [:]
        var discovery: [HomeAssistantDiscovery.Characteristic] = []
        for service in tree.services(device: path) {
            guard let serviceUUID = BluetoothUUID(service.uuid) else { continue }
            let serviceSegment = topics.serviceSegment(serviceUUID, config: dev.config)
            for ch in tree.characteristics(service: service.path) where !known.contains(ch.path) {
                devices[path]?.mapped.insert(ch.path)
                guard let uuid = BluetoothUUID(ch.uuid) else { continue }
                let topic = topics.value(
                    device: dev.segment, service: serviceSegment,
                    characteristic: topics.characteristicSegment(uuid, config: dev.config))
                let format = topics.format(of: uuid, config: dev.config)
                router.setRoute(path: ch.path, topic: topic, format: format)
                commandMap[DeviceDirectory.Key(
                    service: serviceSegment, characteristic: topics.characteristicSegment(uuid, config: dev.config))] =
                    DeviceDirectory.Characteristic(
                        path: ch.path, flags: ch.flags, format: format,
                        writeTypes: dev.config?.characteristic(uuid)?.writeTypes)
                if ch.canNotify { notifyPaths.append(ch.path) }
                if ch.canRead { readPaths.append(ch.path) }
                if config.homeAssistant.discovery && (ch.canNotify || ch.canRead) {
                    discovery.append(HomeAssistantDiscovery.Characteristic(
                        device: dev.segment, address: dev.address.description,
                        deviceName: bluez.tree.device(path)?.name, service: serviceSegment,
                        characteristic: topics.characteristicSegment(uuid, config: dev.config), uuid: uuid, format: format))
                }
                if let poll = dev.config?.characteristic(uuid)?.poll, ch.canRead { polls.append((ch.path, poll)) }
            }
        }
        if onlyNew && commandMap.isEmpty { return }
        directory.addCharacteristics(segment: dev.segment, commandMap)
        publishDiscovery(path, discovery)
        var failures = 0
        var started: [String] = []
        for p in notifyPaths {
            do {
                try await bluez.startNotify(characteristic: p)
                started.append(p)
            } catch {
                // Generic Attribute's Service Changed and similar may refuse; go on with the rest.
                logger.warning("StartNotify \(p) failed: \(error)")
                failures += 1
            }
        }
        for p in readPaths {
            let key = dev.address.description + " " + (tree.characteristic(p)?.uuid ?? p)
            if unreadable.contains(key) { continue }
            do {
                let value = try await bluez.readValue(characteristic: p)
                router.publishRead(path: p, value: value)
            } catch {
                // A characteristic that needs encryption or authentication makes BlueZ try to pair
                // (and, with no agent, drop the link): never read it again.
                let linkDropped = bluez.tree.device(path).map { !$0.servicesResolved } ?? true
                if Self.isSecurityRefusal(error, linkDropped: linkDropped) {
                    unreadable.insert(key)
                    logger.warning("ReadValue \(p) refused (\(error)): it needs pairing; not reading it again")
                } else {
                    logger.warning("ReadValue \(p) failed: \(error)")
                }
            }
        }
        guard let current = devices[path] else { return }
        var charMap: [String: String] = [:]
        for (k, v) in directory.characteristics(segment: dev.segment) {
            charMap[k.service + "/" + k.characteristic] = tree.characteristic(v.path)?.uuid ?? ""
        }
        remember(current, characteristics: charMap, services: tree.services(device: path).map(\.uuid))
        if onlyNew {
            devices[path]?.notifying += started
        } else {
            devices[path]?.notifying = started
        }
        var tasks: [Task<Void, Never>] = []
        for (p, interval) in polls {
            tasks.append(Task { [bluez, router, logger] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    if Task.isCancelled { return }
                    do {
                        router.publishRead(path: p, value: try await bluez.readValue(characteristic: p))
                    } catch {
                        logger.debug("poll \(p): \(error)")
                    }
                }
            })
        }
        if onlyNew {
            devices[path]?.pollTasks += tasks
            publishDevices()  // its services may have grown
            logger.info(
                "\(dev.address): \(commandMap.count) more characteristics appeared: subscribed to \(started.count), read \(readPaths.count)\(failures > 0 ? ", \(failures) refused notifications" : "")")
            return
        }
        devices[path]?.pollTasks = tasks
        logger.info(
            "\(dev.address): subscribed to \(started.count) characteristics, read \(readPaths.count)\(failures > 0 ? ", \(failures) refused notifications" : "")")
        if !notifyPaths.isEmpty && started.isEmpty {
            feed(path, .subscribeFailed)
        } else {
            feed(path, .subscribed)
            // Objects that appeared while subscribing were not in the snapshot above.
            checkGatt(path)
        }
    }

    // MARK: Home Assistant discovery

    /// Retained discovery configs published per device path: topic → payload.
    private var discoveryConfigs: [String: [String: [UInt8]]] = [:]

    /// Publishes the discovery config of each characteristic that has one and changed.
    private func publishDiscovery(_ path: String, _ list: [HomeAssistantDiscovery.Characteristic]) {
        for c in list {
            guard let (topic, payload) = HomeAssistantDiscovery.config(for: c, topics: topics) else { continue }
            if discoveryConfigs[path]?[topic] == payload { continue }
            discoveryConfigs[path, default: [:]][topic] = payload
            discoveryRemovals.remove(topic)
            publishBytes(topic, payload, retain: true)
        }
    }

    /// Home Assistant restarted: it lost nothing retained, but asks integrations to announce again.
    /// Also after every (re)connection to the broker: configs published while it was away were
    /// lost, and a broker without persistence forgets retained messages when it restarts.
    private func republishDiscovery(reason: String) {
        for topic in discoveryRemovals where publishBytes(topic, [], retain: true) {
            discoveryRemovals.remove(topic)
        }
        var count = 0
        for (_, configs) in discoveryConfigs {
            for (topic, payload) in configs {
                publishBytes(topic, payload, retain: true)
                count += 1
            }
        }
        if count > 0 { logger.info("\(reason): published \(count) discovery configs again") }
    }

    /// Configs of forgotten devices whose removal could not be sent (broker away).
    private var discoveryRemovals: Set<String> = []

    /// Removes a forgotten device's entities from Home Assistant (empty retained configs).
    private func removeDiscovery(_ path: String) {
        guard let configs = discoveryConfigs.removeValue(forKey: path) else { return }
        for topic in configs.keys where !publishBytes(topic, [], retain: true) {
            discoveryRemovals.insert(topic)
        }
    }

    /// Publishes; false when the client did not take the message (broker away).
    @discardableResult
    func publishBytes(_ topic: String, _ payload: [UInt8], retain: Bool, qos: Int = 1) -> Bool {
        if let error = mqtt.publish(topic: topic, payload: payload, qos: qos, retain: retain) {
            logger.debug("publish \(topic) deferred: \(error)")
            return false
        }
        return true
    }

    // MARK: Publishing

    func publish(_ topic: String, _ text: String, retain: Bool, qos: Int = 1) {
        if let error = mqtt.publish(topic: topic, payload: Array(text.utf8), qos: qos, retain: retain) {
            logger.debug("publish \(topic) deferred: \(error)")
        }
    }

    func devicesPayload() -> [UInt8] {
        let tree = bluez.tree
        var list: [JSONValue] = []
        for dev in devices.values.sorted(by: { $0.segment < $1.segment }) {
            let snapshot = tree.device(dev.path)
            // BlueZ 5.66 does not always signal Connected=true after Connect (seen on the real
            // stack): the state machine knows from the Connect reply.
            let connected = (snapshot?.connected ?? false) || dev.machine.isConnected
            var services: [JSONValue] = []
            if connected && dev.machine.servicesResolved {
                for s in tree.services(device: dev.path) {
                    if let u = BluetoothUUID(s.uuid) { services.append(.string(topics.serviceSegment(u, config: dev.config))) }
                }
            } else {
                for u in snapshot?.uuids ?? [] {
                    if let uuid = BluetoothUUID(u) { services.append(.string(topics.serviceSegment(uuid, config: dev.config))) }
                }
            }
            var obj = JSONObject()
            obj.append("name", .string(dev.segment))
            obj.append("address", .string(dev.address.description))
            obj.append("address_type", .string(dev.addressType))
            obj.append("connected", .bool(connected))
            // BlueZ reports 127 for "no valid RSSI" on some controllers.
            if let rssi = snapshot?.rssi, rssi != 127 { obj.append("rssi", .integer(Int64(rssi))) } else { obj.append("rssi", .null) }
            obj.append("services", .array(services))
            list.append(.object(obj))
        }
        return JSONValue.array(list).jsonBytes
    }

    private func publishDevices(force: Bool = false) {
        let payload = devicesPayload()
        guard force || payload != lastDevicesPayload else { return }
        lastDevicesPayload = payload
        _ = mqtt.publish(topic: topics.bridgeDevices, payload: payload, qos: 1, retain: true)
    }

    private func publishRetainedState() {
        logger.info("MQTT connected: publishing bridge state")
        publish(topics.bridgeState, "online", retain: true)
        for dev in devices.values {
            publish(topics.availability(device: dev.segment), dev.available ? "online" : "offline", retain: true)
        }
        publishDevices(force: true)
    }

    // MARK: Shutdown

    private func shutdown() async {
        logger.info("shutting down")
        watchdogTask?.cancel()
        publish(topics.bridgeState, "offline", retain: true)
        for dev in devices.values {
            publish(topics.availability(device: dev.segment), "offline", retain: true)
            for t in dev.pollTasks { t.cancel() }
        }
        let all = Array(devices.values)
        let bluez = self.bluez
        let tree = bluez.tree
        let connectedPaths = all.filter { tree.device($0.path)?.connected == true || $0.machine.isConnected }.map(\.path)
        let logger = self.logger
        let stopScan = discoveryOurs
        let adapter = adapterPath
        // Stop notifications and disconnect, bounded: a wedged adapter must not hold the exit.
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                await withTaskGroup(of: Void.self) { inner in
                    for dev in all {
                        inner.addTask {
                            for p in dev.notifying { try? await bluez.stopNotify(characteristic: p) }
                            if connectedPaths.contains(dev.path) {
                                do { try await bluez.disconnect(device: dev.path) } catch {
                                    logger.debug("disconnect \(dev.address): \(error)")
                                }
                            }
                        }
                    }
                    if stopScan {
                        inner.addTask { try? await bluez.stopDiscovery(adapter: adapter) }
                    }
                }
            }
            group.addTask { try? await Task.sleep(for: .seconds(3)) }
            await group.next()
            group.cancelAll()
        }
        devices.removeAll()
        bluez.stop()
        logger.info("published \(router.published) values\(router.failed > 0 ? ", \(router.failed) not sent (broker away)" : "")")
    }
}

// MARK: - Known peripherals and bridge requests

extension BridgeEngine {
    static func devicePath(adapter: String, address: String) -> String {
        adapter + "/dev_" + address.uppercased().split(separator: ":").joined(separator: "_")
    }

    /// Connects the peripherals of the state file straight away: the device object BlueZ still
    /// has, else `Adapter1.ConnectDevice` with the stored address type, else the scan finds it.
    func connectKnownPeripherals(only address: String? = nil) {
        for p in known.peripherals where address == nil || p.address == address {
            guard adapterReady else { return }
            let path = Self.devicePath(adapter: adapterPath, address: p.address)
            awaitingFirstValue.insert(path)
            if bluez.tree.device(path) != nil {
                logger.info("stored peripheral \(p.address): BlueZ still knows it, connecting")
                consider(path)
                continue
            }
            logger.info("stored peripheral \(p.address): not in BlueZ's tree, trying ConnectDevice")
            Task { [bluez, adapterPath, logger] in
                do {
                    let created = try await bluez.connectDevice(adapter: adapterPath, address: p.address, addressType: p.addressType)
                    logger.info("ConnectDevice \(p.address) → \(created)")
                } catch {
                    logger.notice("ConnectDevice \(p.address) failed (\(error)); waiting for the scan to find it")
                }
            }
        }
    }

    /// Records a peripheral after a successful subscription.
    func remember(_ dev: ManagedDevice, characteristics: [String: String], services: [String]) {
        guard let stateFile else { return }
        let name = bluez.tree.device(dev.path).flatMap { $0.name }
        let prefix = dev.address.description + " "
        let refused = unreadable.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) }.sorted()
        let entry = KnownPeripheral(
            address: dev.address.description, addressType: dev.addressType, name: name, services: services,
            characteristics: characteristics, unreadable: refused)
        knownAddresses.insert(entry.address)
        if known.upsert(entry) {
            stateFile.save(known)
        }
        if awaitingFirstValue.remove(dev.path) != nil {
            let ms = (ContinuousClock.now - startedAt).components
            let elapsed = Double(ms.seconds) * 1000 + Double(ms.attoseconds) / 1e15
            logger.notice("stored peripheral \(dev.address) publishing \(Int(elapsed)) ms after start")
        }
    }

    func handleRequest(_ command: String, _ message: MQTTMessage) async {
        let request = (try? JSONParser.parse(message.payload)) ?? .null
        let transaction = request["transaction"]
        var data = JSONObject()
        var error: String?
        switch command {
        case "health_check":
            data.append("healthy", .bool(bluez.isAvailable && adapterReady))
            data.append("bluez", .bool(bluez.isAvailable))
            data.append("adapter", .bool(adapterReady))
            data.append("devices", .integer(Int64(devices.count)))
            data.append("connected", .integer(Int64(devices.values.filter(\.available).count)))
            data.append("published", .integer(Int64(clamping: router.published)))
        case "devices":
            let list = (try? JSONParser.parse(devicesPayload())) ?? .array([])
            data.append("devices", list)
        case "forget", "reconnect":
            guard let target = request["device"]?.stringValue ?? (request.stringValue) else {
                error = "expected {\"device\": \"<name or address>\"}"
                break
            }
            guard let (path, dev) = findDevice(target) else {
                if command == "forget", let a = BluetoothAddress(target), known.remove(address: a.description) {
                    knownAddresses.remove(a.description)
                    unreadable = unreadable.filter { !$0.hasPrefix(a.description + " ") }
                    stateFile?.save(known)
                    data.append("device", .string(target))
                    break
                }
                error = "no device '\(target)' is known to the bridge"
                break
            }
            data.append("device", .string(dev.segment))
            data.append("address", .string(dev.address.description))
            if command == "forget" {
                logger.notice("forgetting \(dev.address) on request")
                known.remove(address: dev.address.description)
                knownAddresses.remove(dev.address.description)
                unreadable = unreadable.filter { !$0.hasPrefix(dev.address.description + " ") }
                stateFile?.save(known)
                removeDiscovery(path)
                feed(path, .stopRequested)
                stopManaging(path)
                directory.forget(segment: dev.segment)
                publish(topics.availability(device: dev.segment), "offline", retain: true)
                let bluez = self.bluez, adapter = adapterPath, logger = self.logger
                Task {
                    try? await bluez.disconnect(device: path)
                    do { try await bluez.removeDevice(adapter: adapter, device: path) } catch {
                        logger.debug("RemoveDevice \(path): \(error)")
                    }
                }
            } else {
                logger.notice("reconnecting \(dev.address) on request")
                let bluez = self.bluez
                Task { try? await bluez.disconnect(device: path) }
            }
        default:
            error = "unknown request '\(command)' (known: health_check, devices, forget, reconnect)"
        }
        var response = JSONObject()
        response.append("status", .string(error == nil ? "ok" : "error"))
        response.append("data", .object(data))
        if let error { response.append("error", .string(error)) }
        if let transaction { response.append("transaction", transaction) }
        let payload = JSONValue.object(response).jsonBytes
        _ = mqtt.publish(topic: topics.bridgeResponse(command), payload: payload, qos: 1)
        if let rt = message.responseTopic, TopicMapper.topicProblem(rt) == nil {
            _ = mqtt.publish(MQTTMessage(
                topic: rt, payload: payload, qos: 1, retain: false, responseTopic: nil,
                correlationData: message.correlationData))
        }
    }

    private func findDevice(_ target: String) -> (String, ManagedDevice)? {
        let address = BluetoothAddress(target)
        for (path, dev) in devices where dev.segment == target || dev.address == address {
            return (path, dev)
        }
        return nil
    }
}

extension BridgeEngine {
    /// A state without its clock values, for logs.
    static func describe(_ state: Machine.State) -> String {
        let now = ContinuousClock.now
        func inSeconds(_ i: ContinuousClock.Instant) -> String {
            let d = (i - now).components
            let tenths = d.seconds * 10 + d.attoseconds / 100_000_000_000_000_000
            return tenths > 0 ? "in \(tenths / 10).\(tenths % 10) s" : "due"
        }
        switch state {
        case .idle: return "idle"
        case .connecting(let d): return "connecting (deadline \(inSeconds(d)))"
        case .resolving(let d): return "resolving services (deadline \(inSeconds(d)))"
        case .subscribing(let d): return "subscribing (deadline \(inSeconds(d)))"
        case .ready: return "ready"
        case .disconnecting(let d): return "waiting for disconnect (deadline \(inSeconds(d)))"
        case .backoff(let until): return "backing off, retry \(inSeconds(until))"
        case .stopped: return "stopped"
        }
    }
}
