import BlueZ
import ConfigLoader
import BridgeCore
import RuntimeCore
import Logging
import MQTT

/// Executes the ``SupervisorCore``'s decisions: its loop feeds the core each input of its inbox
/// (with what it reads of BlueZ's tree) and performs the actions it returns: BlueZ calls as child
/// tasks whose results come back as inputs, publishing, the registry, one ``PeripheralSession``
/// (or ``AdvertisementSession``) per managed device, each a child task.
///
/// The supervisor never touches a device's connection: it forwards BlueZ's changes of a device to
/// its session and learns what the session did from its reports. Values do not pass through
/// here (``ValueRouter`` publishes them from the I/O thread).
final class Supervisor {
    /// The context; its configuration's devices follow the run-time entries (SPEC §14).
    var ctx: RuntimeContext
    let mailbox: Mailbox<SupervisorInput>
    var logger: Logger { ctx.logger }
    var config: BridgeConfig { ctx.config }
    var central: any BluetoothCentral { ctx.central }
    var now: BridgeInstant { ctx.clock.now }

    /// The decisions.
    var core: SupervisorCore
    /// The inboxes of the running sessions, by device object path.
    var sessions: [String: Mailbox<SessionInput>] = [:]
    var known = KnownPeripheralBook()
    /// The advertisers a `scan` request hears (SPEC §14).
    let scanCollector: ScanCollector
    var homeAssistant: HomeAssistantPublisher
    /// The core finished the shutdown.
    var done = false

    init(context: RuntimeContext, mailbox: Mailbox<SupervisorInput>) {
        ctx = context
        self.mailbox = mailbox
        core = SupervisorCore(config: context.config, now: context.clock.now)
        scanCollector = ScanCollector(clock: context.clock)
        core.families = context.advertisements.families
        core.decodeAddedDevice = { [config = context.config] json throws(ConfigError) in try config.decodeAddedDevice(json) }
        homeAssistant = HomeAssistantPublisher(
            broker: context.broker, topics: context.topics, logger: context.logger,
            bridge: HomeAssistantDiscovery.Bridge(config: context.config, version: BridgeCommandLine.version),
            trackers: context.config.trackers)
        known.stateFile = context.config.stateFile.map { StateFile(path: $0, clock: context.clock, logger: context.logger) }
        if context.config.cluster.enabled {
            // Until the cluster says this bridge publishes a tracker, another does (its config names that bridge).
            homeAssistant.trackersServedElsewhere = Set(context.config.trackers.map(\.name))
        }
    }

    /// Serves the devices of `devices_file` (SPEC §14) from the start, as if bridge.yaml had them (the broker's
    /// retained entries, once connected, are the truth).
    func loadAddedDevices() {
        guard let path = ctx.config.devicesFilePath else { return }
        let entries = DevicesFile(path: path, logger: logger).load()
        guard !entries.isEmpty else { return }
        var actions: [SupervisorCore.Action] = []
        core.loadAdded(entries, &actions)
        for action in actions {
            switch action {
            case .log(let level, let message): logger.log(level: level, "\(message)")
            case .devicesChanged(let devices):
                ctx.config.devices = devices
                ctx.topics = TopicMapper(config: ctx.config)
            default: break
            }
        }
    }

    /// The earliest deadline of the supervisor's core (the cluster's included) and of the presence timers.
    func armDeadline() -> BridgeInstant? {
        let presenceAt = core.stopping ? nil : ctx.presence?.deadline
        return [core.nextDeadline, presenceAt].compactMap { $0 }.min()
    }

    // MARK: Loop

    /// Runs until ``SupervisorInput/stop``; then stops every session within a bounded time.
    func run() async {
        central.setValueHandler { [router = ctx.router] path, value in router.handle(path: path, value: value) }
        // Always: a device added at run time may be an advertisement device (SPEC §14), and `scan` notes every
        // advertiser. The core decides which other reports reach this loop (``SupervisorCore/AdvertisementFilter``).
        let filter = core.advertisementFilter
        central.setAdvertisementHandler { [router = ctx.advertisements, presence = ctx.presence, scan = scanCollector] ad in
            scan.note(ad)
            presence?.handle(ad)
            if router.handle(ad) { return true }
            guard !filter.forwards(dataChanged: ad.dataChanged) else { return false }
            router.noteScanAlive()
            return true
        }
        known.load()
        loadAddedDevices()
        await withDiscardingTaskGroup { group in
            let central = self.central, mailbox = self.mailbox
            group.addTask {
                for await event in central.events { mailbox.send(.bluez(event)) }
            }
            feed(.started(stored: known.all), .noDevices, &group)
            await central.start()
            if !central.isAvailable {
                logger.warning("org.bluez is not available on the D-Bus: waiting for BlueZ (bluetoothd)")
            }
            while !done {
                switch await mailbox.receive(until: armDeadline(), clock: ctx.clock) {
                case .input(let input): handle(input, &group)
                case .deadline: break
                case .finished: feed(.inboxClosed, .noDevices, &group)
                }
                fireTimers(&group)
            }
            group.cancelAll()
        }
        logger.info("published \(ctx.router.published) values\(ctx.router.failed > 0 ? ", \(ctx.router.failed) not sent (broker away)" : "")")
    }

    private func fireTimers(_ group: inout DiscardingTaskGroup) {
        let now = self.now
        if let at = core.nextDeadline, at <= now {
            feed(
                .tick(lastAdvertisement: ctx.advertisements.lastAdvertisement, advertisers: advertisers()),
                .paths(core.pathsNeeded(at: now)), &group)
        }
        if !core.stopping, let presence = ctx.presence, let at = presence.deadline, at <= now { presence.tick() }
    }

    /// Feeds one input to the core. While it stops, the core decides what still counts (the sessions' ends);
    /// the executor only keeps its own books (the session handles).
    private func handle(_ input: SupervisorInput, _ group: inout DiscardingTaskGroup) {
        switch input {
        case .bluez(let event):
            handleBlueZ(event, &group)
        case .brokerConnected:
            feed(.brokerConnected, .noDevices, &group)
        case .brokerDisconnected:
            feed(.brokerDisconnected, .noDevices, &group)
        case .presence:
            break  // the loop waits for the new deadline
        case .trackerHeard(let name, let address, let path, let rssi):
            feed(
                .trackerHeard(segment: name, address: address, adapter: BlueZNames.adapterName(of: path), rssi: rssi),
                .noDevices, &group)
        case .cluster(let topic, let payload):
            feed(.clusterMessage(topic, payload: payload), .noDevices, &group)
        case .homeAssistantOnline:
            feed(.homeAssistantOnline, .noDevices, &group)
        case .legacyDiscovery(let topic):
            feed(.legacyDiscovery(topic: topic), .noDevices, &group)
        case .request(let command, let message):
            handleRequest(command, message, &group)
        case .configDevice(let segment, let payload):
            feed(.configDevice(segment: segment, payload: payload), .adapters, &group)
        case .session(let path, let report):
            switch report {
            // Reports that change `bridge/devices` read the device's object (its Connected, RSSI, UUIDs, bond).
            case .availability(let online): feed(.availability(path: path, online), .paths([path]), &group)
            case .linkChanged(let up):
                feed(.linkChanged(path: path, connected: up), .paths([path]), &group)
            case .connectReturned: feed(.connectReturned(path: path), .noDevices, &group)
            case .mapped(let mapped): feed(.mapped(path: path, mapped), .paths([path]), &group)
            case .advertised(let advertised):
                let name = config.homeAssistant.discovery ? central.device(path).flatMap(\.localName) : nil
                feed(.advertised(path: path, advertised, name: name), .noDevices, &group)
            case .unreadable(let uuid): feed(.unreadable(path: path, uuid: uuid), .noDevices, &group)
            case .paired: feed(.paired(path: path), .paths([path]), &group)
            }
        case .sessionEnded(let path):
            sessions[path] = nil
            feed(.sessionEnded(path: path), .paths([path]), &group)
        case .storedConnectReturned(let path):
            feed(.storedConnectReturned(path: path), .noDevices, &group)
        case .powerFinished(let adapter, let error):
            feed(.powerFinished(adapter: adapter, error: error.map(BluetoothError.init)), .noDevices, &group)
        case .discoveryFinished(let adapter, let error):
            feed(.discoveryFinished(adapter: adapter, error: error.map(BluetoothError.init)), .noDevices, &group)
        case .monitorRegistered(let adapter, let error):
            feed(.monitorRegistered(adapter: adapter, error: error.map(BluetoothError.init)), .noDevices, &group)
        case .stop:
            feed(.stop, .noDevices, &group)
        }
    }

    private func handleBlueZ(_ e: BlueZEvent, _ group: inout DiscardingTaskGroup) {
        switch e {
        case .serviceAvailable:
            logger.info("BlueZ is on the D-Bus; \(central.objectCount) objects")
            feed(.bluezAvailable, .adapters, &group)
        case .serviceLost:
            feed(.bluezLost, .noDevices, &group)
        case .interfacesAdded(let path, let ifaces):
            if ifaces.contains(BlueZ.adapter), let name = Self.adapterName(path) { feed(.adapterAdded(name), .adapters, &group) }
            if ifaces.contains(BlueZ.device) {
                feed(.deviceAdded(path: path), .paths([path]), &group)
            }
            if ifaces.contains(BlueZ.gattService) || ifaces.contains(BlueZ.gattCharacteristic),
               let device = BlueZNames.devicePath(of: path)
            {
                feed(.gattObjectsChanged(device: device), .noDevices, &group)
            }
        case .interfacesRemoved(let path, let ifaces):
            if ifaces.contains(BlueZ.adapter), let name = Self.adapterName(path) { feed(.adapterRemoved(name), .noDevices, &group) }
            if ifaces.contains(BlueZ.device) { feed(.deviceRemoved(path: path), .noDevices, &group) }
        case .notificationsReleased(let characteristic):
            feed(.notificationsReleased(characteristic: characteristic), .noDevices, &group)
        case .propertiesChanged(let path, let iface, let changed):
            switch iface {
            case BlueZ.adapter:
                if let name = Self.adapterName(path) {
                    feed(.adapterChanged(name, changed), changed.contains("Powered") ? .adapters : .noDevices, &group)
                }
            case BlueZ.device:
                feed(.deviceChanged(path: path, changed), core.needsSnapshot(path: path, changed: changed) ? .paths([path]) : .noDevices, &group)
            default:
                break
            }
        }
    }

    // MARK: Feeding the core

    /// Which device objects an input needs read.
    enum DeviceScope {
        /// No device object (the adapters only).
        case noDevices
        /// These device objects (with, when several adapters are in use, the same address's objects on the others).
        case paths([String])
        /// Every device of the adapters in use.
        case adapters
    }

    /// Reads the tree, feeds one input to the core and performs its actions.
    func feed(_ event: SupervisorCore.Event, _ scope: DeviceScope, _ group: inout DiscardingTaskGroup) {
        let tree = readTree(scope)
        let actions = core.handle(event, now: now, tree: tree, unixTime: ctx.clock.unixTime)
        for action in actions { perform(action, &group) }
    }

    /// `hci1` for the adapter object `/org/bluez/hci1`; nil for any other path (a device's among them).
    static func adapterName(_ path: String) -> String? {
        let name = BlueZNames.adapterName(of: path)
        return BlueZNames.adapterPath(name) == path ? name : nil
    }

    func readTree(_ scope: DeviceScope) -> SupervisorCore.Tree {
        let several = core.severalAdapters
        var adapters: [String: SupervisorCore.Tree.Adapter] = [:]
        for a in central.adapters() {
            guard let name = Self.adapterName(a.path) else { continue }
            adapters[name] = SupervisorCore.Tree.Adapter(
                powered: a.powered, discovering: a.discovering, address: a.address, offersMonitor: a.offersMonitor)
        }
        var tree = SupervisorCore.Tree(bluezAvailable: central.isAvailable, adapters: adapters)
        let inUse = core.adaptersInUse(tree)
        switch scope {
        case .noDevices:
            break
        case .paths(let paths):
            var wanted = paths
            if several {
                // The same address's objects on the other adapters: where else the device is heard.
                for path in paths {
                    let address = BlueZNames.address(fromDevicePath: path)
                    guard !address.isEmpty else { continue }
                    wanted += inUse.map { BlueZNames.devicePath(adapterName: $0, address: address) }
                }
            }
            for path in wanted where tree.devices[path] == nil { tree.devices[path] = central.device(path).map(DeviceSnapshot.init) }
        case .adapters:
            for name in inUse {
                for dev in central.devices(adapter: BlueZNames.adapterPath(name)) { tree.devices[dev.path] = DeviceSnapshot(dev) }
            }
        }
        if several || core.cluster != nil {
            for name in core.knownAdapters { tree.freeSlots[name] = ctx.slots.free(on: name) }
        }
        return tree
    }
}
