import BridgeBase
import DBusKit

/// `org.bluez.AdvertisementMonitorManager1` (bluetoothd 5.66 offers it only with `--experimental`,
/// as `bluez-sim --experimental` does): passive scanning. A client registers the root of its
/// `AdvertisementMonitor1` objects; bluetoothd reads them with `GetManagedObjects`, calls
/// `Activate`, and from then on reports the advertisements of matching devices on `Device1`
/// (and calls `DeviceFound`) without a discovery session.
extension Simulator {
    static let monitorInterface = BlueZNames.advertisementMonitor
    static let monitorManagerInterface = BlueZNames.advertisementMonitorManager

    func monitorManagerInterface(_ a: SimulatedAdapter) -> DBusInterfaceExport {
        DBusInterfaceExport(
            name: Self.monitorManagerInterface,
            properties: [
                "SupportedMonitorTypes": .stringArray(["or_patterns"]),
                "SupportedFeatures": .stringArray([]),
            ],
            methods: [
                "RegisterMonitor": DBusMethod(in: "o") { [weak self] inv in
                    try await self?.registerMonitor(adapter: inv.path, sender: inv.sender, root: inv.arguments[0].string ?? "")
                    return []
                },
                "UnregisterMonitor": DBusMethod(in: "o") { [weak self] inv in
                    try await self?.unregisterMonitor(adapter: inv.path, sender: inv.sender, root: inv.arguments[0].string ?? "")
                    return []
                },
            ])
    }

    func registerMonitor(adapter path: String, sender: String, root: String) async throws(DBusError) {
        let a = try adapter(path)
        let key = sender + " " + root
        guard a.monitorApps[key] == nil else { throw BluezError.alreadyExists }
        let reply: [DBusValue]
        do {
            reply = try await server.connection.call(
                destination: sender, path: root, interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects", timeout: .seconds(5))
        } catch {
            throw BluezError.failed("Failed to read the monitor hierarchy: \(error)")
        }
        var monitors: [AdvertisementMonitorApp.Monitor] = []
        for entry in reply.first?.dictEntries ?? [] {
            guard let objectPath = entry.key.string, let interfaces = entry.value.stringDict,
                  let properties = interfaces[Self.monitorInterface]?.stringDict
            else { continue }
            guard properties["Type"]?.string == "or_patterns" else { throw BluezError.invalidArguments("Type must be or_patterns") }
            var patterns: [AdvertisementMonitorApp.Pattern] = []
            for item in properties["Patterns"]?.array ?? [] {
                guard let f = item.fields, f.count == 3, let start = f[0].int, let type = f[1].int, let content = f[2].bytes,
                      !content.isEmpty, content.count <= 31
                else { throw BluezError.invalidArguments("bad pattern") }
                patterns.append(.init(start: start, adType: UInt8(truncatingIfNeeded: type), content: content))
            }
            guard !patterns.isEmpty else { throw BluezError.invalidArguments("no patterns") }
            monitors.append(.init(path: objectPath, patterns: patterns))
        }
        guard !monitors.isEmpty else { throw BluezError.invalidArguments("no AdvertisementMonitor1 objects under \(root)") }
        // The actor may have moved on while the client answered.
        guard adapters[path]?.monitorApps[key] == nil else { throw BluezError.alreadyExists }
        a.monitorApps[key] = AdvertisementMonitorApp(sender: sender, root: root, monitors: monitors)
        logger.info("advertisement monitor registered", metadata: ["client": "\(sender)", "monitors": "\(monitors.count)"])
        for m in monitors { callMonitor(sender: sender, path: m.path, "Activate") }
        if a.monitorApps.count == 1 { beginMonitoring(a) }
    }

    func unregisterMonitor(adapter path: String, sender: String, root: String) throws(DBusError) {
        let a = try adapter(path)
        guard a.monitorApps.removeValue(forKey: sender + " " + root) != nil else { throw BluezError.doesNotExist }
        if a.monitorApps.isEmpty { a.monitorGeneration &+= 1 }
    }

    /// A client left the bus: its monitors go.
    func dropMonitors(of sender: String) {
        for path in adapterOrder {
            guard let a = adapters[path] else { continue }
            let before = a.monitorApps.count
            a.monitorApps = a.monitorApps.filter { $0.value.sender != sender }
            if before > 0 && a.monitorApps.isEmpty { a.monitorGeneration &+= 1 }
        }
    }

    /// A method call to a client's monitor object, without waiting for the reply (bluetoothd's
    /// are `noreply`).
    func callMonitor(sender: String, path: String, _ method: String, _ arguments: [DBusValue] = []) {
        let connection = server.connection
        // Unstructured on purpose: a client that does not answer must not hold the simulator.
        Task.detached {
            _ = try? await connection.call(
                destination: sender, path: path, interface: Simulator.monitorInterface, method: method,
                arguments: arguments, timeout: .seconds(5))
        }
    }

    func beginMonitoring(_ a: SimulatedAdapter) {
        a.monitorGeneration &+= 1
        let generation = a.monitorGeneration, path = a.path
        // As the discovery loop: it ends with its generation.
        Task { [weak self] in await self?.runMonitoring(adapter: path, generation: generation) }
    }

    /// Passive scanning while monitors are registered and no discovery runs (the discovery loop
    /// reports everything while it does): the advertisements of matching devices, each at its
    /// own pace, and `DeviceFound` once per monitor and device.
    func runMonitoring(adapter path: String, generation: UInt64) async {
        while let a = adapters[path], a.monitorGeneration == generation, !a.monitorApps.isEmpty {
            let now = clock.now
            var wake = now + .seconds(1)
            if a.powered && !a.discovering {
                for d in devices(of: a) where d.inRange && advertises(d) {
                    // A replaying peripheral's frames differ: each is matched as it is sent.
                    let replaying = !d.spec.replay.isEmpty
                    var matches = a.monitorApps.mapValues { $0.matching(d.advertisedSpec, serviceData: d.serviceData) }
                    guard replaying || matches.values.contains(where: { !$0.isEmpty }) else { continue }
                    let due = d.nextAdvertisement ?? (now + firstAdvertisementDelay(d))
                    if due <= now {
                        let interval = d.ownAdvertisingInterval ?? settings.rssiInterval
                        d.nextAdvertisement = due + interval < now - interval ? now : due + interval
                        var frame: ReplayFrame?
                        if replaying {
                            frame = nextReplayFrame(d, duplicateData: a.duplicateData)
                            matches = a.monitorApps.mapValues { $0.matching(d.advertisedSpec, serviceData: d.serviceData) }
                        }
                        wake = min(wake, d.nextAdvertisement!)
                        guard matches.values.contains(where: { !$0.isEmpty }) else { continue }
                        advertisement(d, adapter: a, passive: true, replayed: frame)
                        for (key, monitors) in matches {
                            for m in monitors where a.monitorApps[key]?.found.insert(m.path + " " + d.path).inserted == true {
                                callMonitor(sender: a.monitorApps[key]!.sender, path: m.path, "DeviceFound", [.objectPath(d.path)])
                            }
                        }
                    } else {
                        d.nextAdvertisement = due
                    }
                    wake = min(wake, d.nextAdvertisement!)
                }
            }
            try? await Task.sleep(until: wake, clock: clock)
        }
    }
}
