import BridgeBase
import DBusKit
import Logging
import Synchronization

/// Options of a ``Simulator`` that are not part of a scenario.
public struct SimulatorOptions: Sendable {
    /// Export the Generic Attribute service (0x1801, Service Changed 0x2A05) like real peripherals.
    public var genericAttributeService: Bool = true
    /// Keep GATT objects across disconnects (BlueZ 5.66 default `[GATT] Cache = always`). When false,
    /// GATT objects are removed on disconnect and notification sessions end with the link.
    public var gattCache: Bool = true
    /// Offer the experimental `Adapter1.ConnectDevice` (bluetoothd `-E`, `bluez-sim --experimental`).
    /// Debian's bluetoothd runs without it: the method is absent and calls get `UnknownMethod`.
    public var connectDevice: Bool = false
    /// Wall-clock period of flushing the notification log.
    public var notifyLogFlushInterval: Duration = .milliseconds(50)
    /// Also log every broadcast frame (scenario `broadcast`) to the notification log, when it is
    /// signalled: `<unix_ns> <address> <service data uuid> <hex>` (`--log-broadcasts`).
    public var logBroadcasts: Bool = false
    /// Where known devices are remembered across restarts (`--state-dir`); nil: nowhere.
    public var stateStore: KnownDeviceStore?
    /// A directory shared with other simulators (`--link-dir`): a peripheral takes one link at a
    /// time across all of them (see ``LinkRegistry``); nil: only across this simulator's adapters.
    public var linkDirectory: String?

    /// Defaults.
    public init() {}
}

/// The simulated bluetoothd: owns the adapters and devices of a scenario and serves BlueZ's
/// `org.bluez` objects through a ``DBusObjectServer``.
///
/// Method calls run on this actor; periodic notifications run on the ``NotificationScheduler``
/// thread. Fault injection (devices out of range, links dropping, failing connections, adapters
/// going away, ...) goes through the public methods of `Simulator+Faults.swift`, which the control
/// interface (``SimulatorControl``) exposes on the bus.
public actor Simulator {
    let server: DBusObjectServer
    let logger: Logger
    let settings: ScenarioSettings
    let options: SimulatorOptions
    let notifyLog: EventLog?
    let writeLog: EventLog?
    let scheduler: NotificationScheduler
    /// Watches the acquired notification sockets for hang-ups and client packets.
    let socketWatcher = NotifySocketWatcher()
    /// The one thread that polls them.
    let socketLoop = PollLoop(name: "bluez-sim notify sockets")
    let clock = ContinuousClock()
    /// Which peripherals have a link, here and in the simulators sharing ``SimulatorOptions/linkDirectory``.
    let links: LinkRegistry

    var adapters: [String: SimulatedAdapter] = [:]
    var adapterOrder: [String] = []
    var devices: [String: SimulatedDevice] = [:]
    var deviceOrder: [String] = []
    /// Registered agents by the unique name of their client (one per client, as in bluetoothd).
    var agents: [String: RegisteredAgent] = [:]
    /// Owners of the agents that asked to be the default, the current default first.
    var defaultAgents: [String] = []
    /// Pairings running, by device path (`Pair`, or a security elevation of a GATT request).
    var pairings: [String: PairingAttempt] = [:]
    var backgroundTasks: [Task<Void, Never>] = []
    var started = false
    /// A characteristic read waiting for a delayed answer, shared by reads with the same offset.
    struct PendingRead {
        var offset: Int
        var task: Task<Result<[UInt8], DBusError>, Never>
    }
    /// Delayed reads by characteristic path.
    var pendingReads: [String: PendingRead] = [:]
    /// Characteristic paths with a delayed write request pending.
    var pendingWrites: Set<String> = []
    /// Waits for late peripheral answers by device path; a link loss cancels them.
    var linkWaiters: [String: [UInt64: Task<Void, Never>]] = [:]
    var nextWaiterID: UInt64 = 0
    /// The next `StartDiscovery` fails with this error (control `FailNextStartDiscovery`).
    var startDiscoveryFault: DBusError?
    /// `StartDiscovery` calls that failed because of ``startDiscoveryFault``.
    var discoveryStartFailures: UInt64 = 0
    /// Advertisements that reached a client: a device object exported, or its properties signalled.
    var advertisementReports: UInt64 = 0
    /// What was last written to the state store.
    var savedKnownDevices: [KnownDevice]?
    /// The id of the last `AcquireNotify` session.
    var lastAcquisitionID: UInt64 = 0
    /// `AcquireNotify` calls waiting for services to resolve, by device path.
    var serviceWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]

    /// Creates the simulator for `scenario`. Nothing is exported until ``start()``.
    public init(scenario: Scenario, server: DBusObjectServer, logger: Logger, options: SimulatorOptions = SimulatorOptions(),
                notifyLog: EventLog? = nil, writeLog: EventLog? = nil) {
        self.server = server
        self.logger = logger
        self.settings = scenario.settings
        self.options = options
        self.notifyLog = notifyLog
        self.writeLog = writeLog
        self.links = LinkRegistry(directory: options.linkDirectory)
        self.scheduler = NotificationScheduler { [server, notifyLog] c, value, socket in
            Simulator.emitNotification(server: server, log: notifyLog, characteristic: c, value: value, socket: socket)
        }
        for spec in scenario.adapters {
            let a = SimulatedAdapter(spec: spec)
            adapters[a.path] = a
            adapterOrder.append(a.path)
        }
        let unixNow = Self.unixNanoseconds()
        for scenarioSpec in scenario.devices {
            let spec = Self.advertisedSpec(scenarioSpec, unixNanoseconds: unixNow)
            let d = SimulatedDevice(spec: spec, adapterPath: BlueZNames.adapterPath(spec.adapter), settings: scenario.settings,
                                    genericAttributeService: options.genericAttributeService)
            devices[d.path] = d
            deviceOrder.append(d.path)
        }
    }

    /// Exports `/`, `/org/bluez`, the adapters and the known devices, and starts the notification
    /// thread and the housekeeping tasks. Call before requesting the `org.bluez` name.
    public func start() {
        guard !started else { return }
        started = true
        server.addObjectManager(path: "/")
        server.addInterfaces(path: BlueZNames.root, rootInterfaces())
        for path in adapterOrder {
            server.addInterfaces(path: path, adapterInterfaces(adapters[path]!))
        }
        let stored = options.stateStore?.load() ?? []
        for path in deviceOrder {
            let d = devices[path]!
            let adapterName = String(d.adapterPath.split(separator: "/").last ?? "")
            let remembered = stored.first { $0.address == d.spec.address && $0.adapter == adapterName }
            if d.spec.known || remembered != nil {
                d.temporary = false
                if let remembered {
                    d.paired = d.paired || remembered.paired
                    d.bondAuthenticated = remembered.paired && remembered.authenticated
                    d.servicesKnown = remembered.servicesResolved
                }
                exportDevice(d)
            }
        }
        for k in stored where !deviceOrder.contains(where: {
            devices[$0]!.spec.address == k.address && devices[$0]!.adapterPath == BlueZNames.adapterPath(k.adapter)
        }) {
            logger.warning("stored device is not in the scenario, ignored", metadata: ["address": "\(k.address)", "adapter": "\(k.adapter)"])
        }
        savedKnownDevices = stored
        persistKnownDevices()
        scheduler.start()
        startSocketWatcher()
        let sweepEvery = max(.milliseconds(100), min(.seconds(1), settings.temporaryTimeout / 4))
        backgroundTasks.append(Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: sweepEvery)
                await self?.sweepTemporaryDevices()
            }
        })
        if untilNextRotation() != nil {
            backgroundTasks.append(Task { [weak self] in
                while !Task.isCancelled, let wait = await self?.untilNextRotation() {
                    try? await Task.sleep(for: wait + .milliseconds(1))
                    await self?.rotateAddresses()
                }
            })
        }
        if let log = notifyLog {
            let every = options.notifyLogFlushInterval
            backgroundTasks.append(Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: every)
                    log.flush()
                }
            })
        }
        logger.info("simulator started", metadata: [
            "adapters": "\(adapterOrder.count)", "devices": "\(deviceOrder.count)",
        ])
    }

    /// What bluetoothd 5.66 does on SIGTERM before it exits: every adapter powers off
    /// (`Powered: false`, discovery ends, links drop with their signals), then every object is
    /// removed (`InterfacesRemoved`: GATT objects and devices, then the adapters).
    public func shutdown() {
        for path in adapterOrder {
            guard let a = adapters[path], a.present else { continue }
            if a.powered {
                server.setProperties(path: a.path, interface: BlueZNames.adapter, ["Powered": .bool(false)])
                applyPowered(adapter: a.path, false)
            }
        }
        for path in adapterOrder {
            guard let a = adapters[path], a.present else { continue }
            for d in devices(of: a) where d.exported {
                if d.connection != .disconnected { linkLost(d, signal: false) }
                hideDevice(d)
            }
            server.removeSubtree(path: a.path)
        }
        logger.info("objects removed (shutdown)")
    }

    /// Stops notifications and housekeeping and flushes the logs.
    public func stop() {
        for t in backgroundTasks { t.cancel() }
        backgroundTasks.removeAll()
        scheduler.stop()
        for path in deviceOrder {
            for c in devices[path]!.gatt.characteristics { releaseAcquisition(c, signal: false) }
        }
        socketLoop.stop()
        // A stopped simulator holds no peripheral (as when its process ends).
        for path in deviceOrder { devices[path]?.holdsLink = false }
        links.releaseAll()
        notifyLog?.flush()
        writeLog?.flush()
    }

    /// Forgets everything a bus client held (discovery sessions, filters, notification sessions,
    /// agents), as bluetoothd does when the client's unique name vanishes from the bus.
    public func clientVanished(_ uniqueName: String) {
        for path in adapterOrder {
            let a = adapters[path]!
            a.filters[uniqueName] = nil
            if a.discoveryClients.remove(uniqueName) != nil {
                logger.debug("discovery client left the bus", metadata: ["client": "\(uniqueName)"])
                if a.discoveryClients.isEmpty { endDiscovery(a, signals: 2) }
            }
        }
        for path in deviceOrder {
            for c in devices[path]!.gatt.characteristics {
                removeNotifySession(c, sender: uniqueName)
                acquirerVanished(c, uniqueName)
            }
        }
        agentVanished(uniqueName)
        dropMonitors(of: uniqueName)
    }

    // MARK: - Helpers

    func devicesWith(address: String) -> [SimulatedDevice] {
        let upper = address.uppercased()
        return deviceOrder.compactMap { devices[$0] }.filter { $0.spec.address == upper || $0.spec.identity == upper }
    }

    func devices(of adapter: SimulatedAdapter) -> [SimulatedDevice] {
        deviceOrder.compactMap { devices[$0] }.filter { $0.adapterPath == adapter.path }
    }

    /// The device and characteristic at a characteristic path.
    func characteristic(at path: String) throws(DBusError) -> (SimulatedDevice, SimCharacteristic) {
        if let d = owningDevice(of: path), let c = d.gatt.characteristicsByPath[path], d.gattExported {
            return (d, c)
        }
        throw DBusError(DBusError.Name.unknownObject, "No such object \(path)")
    }

    /// The device, descriptor and characteristic at a descriptor path.
    func descriptor(at path: String) throws(DBusError) -> (SimulatedDevice, SimDescriptor, SimCharacteristic) {
        if let d = owningDevice(of: path), let (desc, c) = d.gatt.descriptorsByPath[path], d.gattExported {
            return (d, desc, c)
        }
        throw DBusError(DBusError.Name.unknownObject, "No such object \(path)")
    }

    func owningDevice(of path: String) -> SimulatedDevice? {
        // .../hciN/dev_XX_XX_XX_XX_XX_XX[/...]: the device path is the first 5 components.
        var slashes = 0
        var end = path.endIndex
        for i in path.indices where path[i] == "/" {
            slashes += 1
            if slashes == 5 {
                end = i
                break
            }
        }
        return devices[String(path[..<end])]
    }

    func sleep(_ d: Duration) async {
        guard d > .zero else { return }
        try? await Task.sleep(for: d)
    }

    /// Emits one notification and a log line: one packet on the acquired `socket` (bluetoothd's
    /// `notify_io_cb`: `Value` is neither stored nor signalled, a full socket drops the value), else
    /// `PropertiesChanged(GattCharacteristic1, {Value}, [])` (`notify_cb`).
    static func emitNotification(server: DBusObjectServer, log: EventLog?, characteristic c: SimCharacteristic,
                                 value: [UInt8], socket: NotifySocket?) {
        // Stamped before the packet or signal goes out: stamped after it, the bridge had published
        // one value in ten before the stamp (the simulator's thread descheduled after the send).
        let time = log == nil ? 0 : EventLog.unixTimeNanoseconds()
        if let socket {
            if socket.sendPacket(value) {
                c.socketNotificationCount.add(1, ordering: .relaxed)
            } else {
                c.socketDropCount.add(1, ordering: .relaxed)
            }
        } else {
            // Counted before it is signalled: a client that saw the value then finds it counted.
            c.notificationCount.add(1, ordering: .relaxed)
            server.setProperties(path: c.path, interface: BlueZNames.gattCharacteristic, ["Value": .bytes(value)])
        }
        log?.append(prefix: c.logPrefix, bytes: value, time: time)
        if c.isBatteryLevel { updateBatteryPercentage(server: server, characteristic: c, value: value) }
    }

    /// bluetoothd's battery plugin: `Battery1.Percentage` follows the Battery Level value (signalled
    /// when it changes, only while the interface is on the device object).
    static func updateBatteryPercentage(server: DBusObjectServer, characteristic c: SimCharacteristic, value: [UInt8]) {
        guard let first = value.first else { return }
        let percentage = DBusValue.byte(min(first, 100))
        guard let current = server.property(path: c.devicePath, interface: BlueZNames.battery, name: "Percentage"),
              current != percentage else { return }
        server.setProperties(path: c.devicePath, interface: BlueZNames.battery, ["Percentage": percentage])
    }
}

extension Simulator {
    /// Watches `NameOwnerChanged` on `connection` and calls ``clientVanished(_:)`` for every unique
    /// name that leaves the bus. Cancel the returned task to stop.
    public nonisolated func watchBusClients(_ connection: DBusConnection) -> Task<Void, Never> {
        let stream = connection.signals(DBusMatchRule(
            sender: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus", member: "NameOwnerChanged"))
        return Task { [weak self] in
            for await signal in stream {
                guard signal.arguments.count == 3, let name = signal.arguments[0].string, name.hasPrefix(":"),
                      let newOwner = signal.arguments[2].string, newOwner.isEmpty else { continue }
                await self?.clientVanished(name)
            }
        }
    }
}
