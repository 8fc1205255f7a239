import DBusKit
import Logging

/// Options of a ``Simulator`` that are not part of a scenario.
public struct SimulatorOptions: Sendable {
    /// Export the Generic Attribute service (0x1801, Service Changed 0x2A05) like real peripherals.
    public var genericAttributeService: Bool = true
    /// Keep GATT objects across disconnects (BlueZ 5.66 default `[GATT] Cache = always`). When false,
    /// GATT objects are removed on disconnect and notification sessions end with the link.
    public var gattCache: Bool = true
    /// Offer the experimental `Adapter1.ConnectDevice` (bluetoothd `-E`).
    public var connectDevice: Bool = true
    /// Wall-clock period of flushing the notification log.
    public var notifyLogFlushInterval: Duration = .milliseconds(50)

    /// Defaults.
    public init() {}
}

/// The simulated bluetoothd: owns the adapters and devices of a scenario and serves BlueZ's
/// `org.bluez` objects through a ``DBusObjectServer``.
///
/// Method calls run on this actor; periodic notifications run on the ``NotificationScheduler``
/// thread. Fault injection (devices vanishing, links dropping) goes through the public
/// `set...`/`drop...` methods.
public actor Simulator {
    let server: DBusObjectServer
    let logger: Logger
    let settings: ScenarioSettings
    let options: SimulatorOptions
    let notifyLog: EventLog?
    let writeLog: EventLog?
    let scheduler: NotificationScheduler
    let clock = ContinuousClock()

    var adapters: [String: SimulatedAdapter] = [:]
    var adapterOrder: [String] = []
    var devices: [String: SimulatedDevice] = [:]
    var deviceOrder: [String] = []
    /// Registered agents: object path by client.
    var agents: [String: String] = [:]
    var backgroundTasks: [Task<Void, Never>] = []
    var started = false

    /// Creates the simulator for `scenario`. Nothing is exported until ``start()``.
    public init(scenario: Scenario, server: DBusObjectServer, logger: Logger, options: SimulatorOptions = SimulatorOptions(),
                notifyLog: EventLog? = nil, writeLog: EventLog? = nil) {
        self.server = server
        self.logger = logger
        self.settings = scenario.settings
        self.options = options
        self.notifyLog = notifyLog
        self.writeLog = writeLog
        self.scheduler = NotificationScheduler { [server, notifyLog] c, value in
            Simulator.emitNotification(server: server, log: notifyLog, characteristic: c, value: value)
        }
        for spec in scenario.adapters {
            let a = SimulatedAdapter(spec: spec)
            adapters[a.path] = a
            adapterOrder.append(a.path)
        }
        for spec in scenario.devices {
            let d = SimulatedDevice(spec: spec, adapterPath: BluezNames.adapterPath(spec.adapter), settings: scenario.settings,
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
        server.addInterfaces(path: BluezNames.root, rootInterfaces())
        for path in adapterOrder {
            server.addInterfaces(path: path, adapterInterfaces(adapters[path]!))
        }
        for path in deviceOrder {
            let d = devices[path]!
            if d.spec.known {
                d.temporary = false
                exportDevice(d)
            }
        }
        scheduler.start()
        let sweepEvery = max(.milliseconds(100), min(.seconds(1), settings.temporaryTimeout / 4))
        backgroundTasks.append(Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: sweepEvery)
                await self?.sweepTemporaryDevices()
            }
        })
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

    /// Stops notifications and housekeeping and flushes the logs.
    public func stop() {
        for t in backgroundTasks { t.cancel() }
        backgroundTasks.removeAll()
        scheduler.stop()
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
                if a.discoveryClients.isEmpty { endDiscovery(a) }
            }
        }
        for path in deviceOrder {
            for c in devices[path]!.gatt.characteristics {
                removeNotifySession(c, sender: uniqueName)
            }
        }
        agents[uniqueName] = nil
    }

    // MARK: - Fault injection hooks

    /// Moves the peripheral with `address` into or out of radio range. Out of range it stops
    /// advertising, a connection attempt fails, and an existing link drops (supervision timeout).
    public func setInRange(address: String, _ inRange: Bool) {
        for d in devicesWith(address: address) {
            d.inRange = inRange
            if !inRange && (d.connection == .connected || d.connection == .connecting) {
                linkLost(d)
            }
        }
    }

    /// Drops the link to the peripheral with `address` as if it disconnected.
    public func dropConnection(address: String) {
        for d in devicesWith(address: address) where d.connection != .disconnected {
            linkLost(d)
        }
    }

    // MARK: - Helpers

    func devicesWith(address: String) -> [SimulatedDevice] {
        let upper = address.uppercased()
        return deviceOrder.compactMap { devices[$0] }.filter { $0.spec.address == upper }
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

    /// Emits one notification: `PropertiesChanged(GattCharacteristic1, {Value}, [])` and a log line.
    static func emitNotification(server: DBusObjectServer, log: EventLog?, characteristic c: SimCharacteristic,
                                 value: [UInt8]) {
        server.setProperties(path: c.path, interface: BluezNames.gattCharacteristic, ["Value": .bytes(value)])
        log?.append(prefix: c.logPrefix, bytes: value)
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
