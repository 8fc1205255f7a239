import BridgeBase
import DBusKit

/// `org.bluez.Device1`: connecting, resolving services, disconnecting, pairing.
extension Simulator {
    func device(_ path: String) throws(DBusError) -> SimulatedDevice {
        guard let d = devices[path], d.exported else { throw DBusError(DBusError.Name.unknownObject, "No such object \(path)") }
        return d
    }

    func connect(device path: String) async throws(DBusError) {
        let d = try device(path)
        _ = try await establishLink(d, viaConnectDevice: false)
    }

    /// Connects `d`. Like bluetoothd, the reply comes once the link is up (`Connected` true);
    /// services resolve afterwards (`ServicesResolved` true after `resolveDelay`).
    func establishLink(_ d: SimulatedDevice, viaConnectDevice: Bool) async throws(DBusError) -> String {
        guard let a = adapters[d.adapterPath], a.present, a.powered else { throw BluezError.notReady }
        switch d.connection {
        case .connected:
            d.stats.connectsWhileLinked &+= 1
            return d.path
        case .disconnecting:
            d.stats.connectsWhileLinked &+= 1
            throw BluezError.inProgress
        case .connecting:
            throw BluezError.inProgress
        case .disconnected:
            break
        }
        d.stats.connectAttempts &+= 1
        if var fault = d.connectFault, fault.remaining > 0 {
            fault.remaining -= 1
            d.connectFault = fault.remaining > 0 ? fault : nil
            return try await failConnection(d, fault)
        }
        if d.paired && d.peripheralForgotBond && d.inRange {
            // The link comes up, encryption with the stored key fails (PIN or Key Missing), the
            // kernel disconnects; 5.66 keeps the bond and the ATT connect fails.
            logger.info("the peripheral lost the bond: encryption fails, the link drops", metadata: ["address": "\(d.spec.address)"])
            return try await failConnection(d, ConnectFault(
                error: BluezError.failed("le-connection-abort-by-local"), count: 1, linkUp: true))
        }
        d.temporary = false
        d.connection = .connecting
        d.linkGeneration &+= 1
        let generation = d.linkGeneration
        let started = clock.now
        logger.debug("connecting", metadata: ["address": "\(d.spec.address)", "adapter": "\(d.adapterName)"])
        let delay = d.spec.connectDelay ?? settings.connectDelay
        await sleep(delay)
        guard d.linkGeneration == generation, d.connection == .connecting else {
            d.stats.connectFailures &+= 1
            throw BluezError.failed("le-connection-abort-by-local")
        }
        var linked = d.inRange && a.present && a.powered && links.acquire(d.spec.address, holder: d.adapterName)
        if !linked && d.inRange && a.present && a.powered {
            // The peripheral has a link elsewhere (another adapter here, or another simulator sharing the
            // link directory) and does not answer; the controller keeps initiating until the connect
            // timeout, so the link comes up if the other one ends meanwhile.
            d.stats.linkConflicts &+= 1
            logger.info("peripheral linked elsewhere, waiting", metadata: ["address": "\(d.spec.address)", "adapter": "\(d.adapterName)"])
            let deadline = started + settings.connectTimeout
            while !linked, clock.now < deadline {
                await sleep(min(.milliseconds(50), deadline - clock.now))
                guard d.linkGeneration == generation, d.connection == .connecting else {
                    d.stats.connectFailures &+= 1
                    throw BluezError.failed("le-connection-abort-by-local")
                }
                linked = d.inRange && a.present && a.powered && links.acquire(d.spec.address, holder: d.adapterName)
            }
        }
        guard linked else {
            // BlueZ 5.66 (Linux LE create connection): a peripheral that does not answer fails the
            // attempt at the connect timeout with `le-connection-abort-by-local`.
            let remaining = started + settings.connectTimeout - clock.now
            if remaining > .zero { await sleep(remaining) }
            if d.linkGeneration == generation {
                d.connection = .disconnected
                d.linkGeneration &+= 1
            }
            d.stats.connectFailures &+= 1
            logger.info("connection failed: peripheral not answering (out of range or linked elsewhere)",
                        metadata: ["address": "\(d.spec.address)", "adapter": "\(d.adapterName)"])
            throw viaConnectDevice ? DBusError("org.bluez.Failed", "") : BluezError.failed("le-connection-abort-by-local")
        }
        d.holdsLink = true
        d.connection = .connected
        resetExchanges(d)
        d.stats.connects &+= 1
        d.linkLossError = BluezError.operationFailed
        if !d.exported { exportDevice(d) }
        // BlueZ 5.66 sets Connected without signalling it on the central's device object
        // (device_add_connection: "already connected"); Get/GetAll report true.
        server.setProperties(path: d.path, interface: BlueZNames.device, ["Connected": .bool(true)],
                             emit: settings.signalConnected)
        logger.info("connected", metadata: ["address": "\(d.spec.address)", "adapter": "\(d.adapterName)"])
        persistKnownDevices()
        let path = d.path
        Task { [weak self] in
            await self?.resolveServices(device: path, generation: generation)
        }
        return d.path
    }

    /// An injected connection failure (see ``ConnectFault``).
    func failConnection(_ d: SimulatedDevice, _ fault: ConnectFault) async throws(DBusError) -> String {
        d.stats.connectFailures &+= 1
        logger.info("connection fails (injected)", metadata: ["address": "\(d.spec.address)", "error": "\(fault.error)"])
        let delay = fault.delay ?? d.spec.connectDelay ?? settings.connectDelay
        guard delay > .zero || fault.linkUp else { throw fault.error }
        d.connection = .connecting
        d.linkGeneration &+= 1
        let generation = d.linkGeneration
        await sleep(delay)
        guard d.linkGeneration == generation, d.connection == .connecting else { throw fault.error }
        guard fault.linkUp, let a = adapters[d.adapterPath], a.present, a.powered else {
            d.connection = .disconnected
            d.linkGeneration &+= 1
            throw fault.error
        }
        // The link came up and failed: Connected true, the error reply, then Connected false.
        d.temporary = false
        if !d.exported { exportDevice(d) }
        d.connection = .disconnecting
        server.setProperties(path: d.path, interface: BlueZNames.device, ["Connected": .bool(true)])
        let path = d.path
        let downAfter = fault.downAfter
        Task { [weak self] in
            try? await Task.sleep(for: downAfter)
            await self?.finishFailedLink(device: path, generation: generation)
        }
        await sleep(.milliseconds(10))
        throw fault.error
    }

    func finishFailedLink(device path: String, generation: UInt64) {
        guard let d = devices[path], d.linkGeneration == generation, d.connection == .disconnecting else { return }
        d.linkGeneration &+= 1
        d.connection = .disconnected
        server.setProperties(path: d.path, interface: BlueZNames.device, ["Connected": .bool(false)])
    }

    /// Resolves the services of a new connection. At the first connection (no cached GATT objects)
    /// BlueZ 5.66 on a quiet machine signals `ServicesResolved: true` first and then exports the
    /// objects one by one in handle order (``ScenarioSettings/gattExportTime``); with
    /// `gatt_objects_first` they are all exported before it. On a reconnect the cached objects are
    /// there and only `ServicesResolved` comes (after ``ScenarioSettings/resolveDelayCached``).
    /// Notification sessions that survived a disconnect resume. The device's ``ResolveBehaviour`` may
    /// delay or withhold either.
    func resolveServices(device path: String, generation: UInt64) async {
        guard let d0 = devices[path] else { return }
        let behaviour = d0.resolveBehaviour
        // bluetoothd keeps the GATT database of a known device on disk (`Cache = always`): after a
        // restart or an adapter re-plug the resolve is a cached one, even before objects exist.
        let cached = d0.gattExported || (options.gattCache && d0.servicesKnown && behaviour == .normal)
        switch behaviour {
        case .neverResolve:
            logger.info("services will not resolve (injected)", metadata: ["address": "\(d0.spec.address)"])
            return
        case .delayed(let delay):
            await sleep(delay)
        case .normal, .resolvedBeforeGatt:
            if cached {
                await sleep(d0.spec.resolveDelayCached ?? settings.resolveDelayCached)
            } else {
                await sleep(d0.spec.resolveDelay ?? settings.resolveDelay)
            }
        }
        guard let d = devices[path], d.linkGeneration == generation, d.connection == .connected else { return }
        if case .resolvedBeforeGatt(let late) = behaviour, !d.gattExported {
            markResolved(d)
            logger.info("services resolved before the GATT objects exist (injected)", metadata: ["address": "\(d.spec.address)"])
            await sleep(late)
            guard d.linkGeneration == generation, d.connection == .connected else { return }
            if !d.gattExported { exportGatt(d) }
            resumeNotifications(d)
            return
        }
        if d.gattExported {
            markResolved(d)
            logger.info("services resolved (cached)", metadata: ["address": "\(d.spec.address)"])
            resumeNotifications(d)
            return
        }
        if settings.gattObjectsFirst {
            exportGatt(d)
            markResolved(d)
            logger.info("services resolved", metadata: ["address": "\(d.spec.address)"])
            resumeNotifications(d)
            return
        }
        // bluetoothd has registered every object when it signals ServicesResolved (GetManagedObjects is
        // complete then); only their InterfacesAdded signals trail. The object server here registers an
        // object when it signals it, so a client that queries ServicesResolved (Get/GetAll) sees true
        // only once the last object is there: query-driven clients see a complete tree as on the real
        // stack, signal-driven ones see the real order. (Stored false in the same step as the signal:
        // a query never sees true, then false.)
        markResolved(d, queryable: false)
        logger.info("services resolved, exporting GATT objects", metadata: ["address": "\(d.spec.address)"])
        await exportGattGradually(d)
        guard d.linkGeneration == generation, d.connection == .connected else { return }
        server.setProperties(path: d.path, interface: BlueZNames.device, ["ServicesResolved": .bool(true)], emit: false)
        resumeNotifications(d)
    }

    /// `ServicesResolved: true` in one `PropertiesChanged` with what bluetoothd learnt over GATT:
    /// `UUIDs` (every resolved service, with 1800 and 1801), `Name`/`Alias` (the GAP name, when the
    /// scenario gives one) and `Modalias` (from a PnP ID 2A50). Then bluetoothd's battery plugin adds
    /// `org.bluez.Battery1` when the device has a Battery Level (180F/2A19).
    /// `queryable: false`: signalled, but `Get`/`GetAll` keep saying false until the caller stores true.
    func markResolved(_ d: SimulatedDevice, queryable: Bool = true) {
        var changes: [String: DBusValue] = [:]
        let uuids = Set(d.advertisedUUIDs).union(d.gatt.resolvedUUIDs).sorted()
        if server.property(path: d.path, interface: BlueZNames.device, name: "UUIDs") != .stringArray(uuids) {
            changes["UUIDs"] = .stringArray(uuids)
        }
        if let gap = d.spec.gapName, d.currentName != gap {
            d.currentName = gap
            changes["Name"] = .string(gap)
            changes["Alias"] = .string(gap)
        }
        if let modalias = d.gatt.modalias,
           server.property(path: d.path, interface: BlueZNames.device, name: "Modalias") != .string(modalias) {
            changes["Modalias"] = .string(modalias)
        }
        changes["ServicesResolved"] = .bool(true)
        d.servicesResolved = true
        server.setProperties(
            path: d.path, interface: BlueZNames.device, changes,
            stored: queryable ? [:] : ["ServicesResolved": .bool(false)])
        if d.pendingPaired {
            // bluetoothd holds `Paired` back until services are resolved (pending_paired).
            d.pendingPaired = false
            server.setProperties(path: d.path, interface: BlueZNames.device, ["Paired": .bool(true)])
        }
        if !d.servicesKnown {
            d.servicesKnown = true
            persistKnownDevices()
        }
        if let battery = d.gatt.batteryLevel, !d.batteryExported {
            d.batteryExported = true
            server.addInterfaces(path: d.path, [
                DBusInterfaceExport(name: BlueZNames.battery, properties: [
                    "Percentage": .byte(min(battery.value.first ?? 0, 100)),
                    "Source": .string("GATT Battery Service"),
                ]),
            ])
        }
    }

    /// `Device1.UUIDs` gains the resolved services (once; BlueZ then remembers them).
    func updateResolvedUUIDs(_ d: SimulatedDevice) {
        var uuids = Set(d.advertisedUUIDs)
        uuids.formUnion(d.gatt.resolvedUUIDs)
        let sorted = uuids.sorted()
        if server.property(path: d.path, interface: BlueZNames.device, name: "UUIDs") != .stringArray(sorted) {
            server.setProperties(path: d.path, interface: BlueZNames.device, ["UUIDs": .stringArray(sorted)])
        }
        if !d.servicesKnown {
            d.servicesKnown = true
            persistKnownDevices()
        }
    }

    func disconnect(device path: String) async {
        guard let d = devices[path] else { return }
        switch d.connection {
        case .disconnected:
            return
        case .connecting:
            // Cancels the attempt: the pending Connect fails.
            d.linkGeneration &+= 1
            d.connection = .disconnected
        case .disconnecting:
            await sleep(d.spec.disconnectDelay ?? settings.disconnectDelay)
        case .connected:
            d.connection = .disconnecting
            let generation = d.linkGeneration
            for c in d.gatt.characteristics { c.state.withLock { $0.active = false } }
            await sleep(d.spec.disconnectDelay ?? settings.disconnectDelay)
            guard d.linkGeneration == generation else { return }
            linkLost(d, requested: true)
            logger.info("disconnected", metadata: ["address": "\(d.spec.address)"])
        }
    }

    /// The link is gone (Disconnect done, power off, out of range, dropped): one
    /// `PropertiesChanged {ServicesResolved: false, Connected: false}` as bluetoothd sends it.
    /// `signal: false` tears it down without signals (the device object is about to go).
    /// With the adapter discovering, the signal also carries `RSSI` (the last advertisement's, 127
    /// from btvirt), as 5.66 sends it. `org.bluez.Battery1` goes away after the signal. Requests still
    /// waiting for the peripheral fail with `pendingError`.
    func linkLost(_ d: SimulatedDevice, requested: Bool = false, signal: Bool = true,
                  pendingError: DBusError = BluezError.operationFailed) {
        d.linkGeneration &+= 1
        let wasUp = d.connection == .connected || d.connection == .disconnecting
        d.connection = .disconnected
        if d.holdsLink {
            d.holdsLink = false
            links.release(d.spec.address)
        }
        for c in d.gatt.characteristics { c.state.withLock { $0.active = false } }
        // Requests waiting for the peripheral end now ("Operation failed").
        d.linkLossError = pendingError
        d.pairingUntil = nil
        pairingLinkLost(d)
        if let waiters = linkWaiters[d.path] { for waiter in waiters.values { waiter.cancel() } }
        resumeServiceWaiters(d)
        guard wasUp else { return }
        d.stats.disconnects &+= 1
        if !requested {
            d.stats.linkLosses &+= 1
            logger.info("link lost", metadata: ["address": "\(d.spec.address)"])
        }
        var changes: [String: DBusValue] = ["Connected": .bool(false)]
        if d.servicesResolved { changes["ServicesResolved"] = .bool(false) }
        d.servicesResolved = false
        if d.hasRSSIProperty || adapters[d.adapterPath]?.discovering == true {
            changes["RSSI"] = .int16(d.rssi)
            d.hasRSSIProperty = true
        }
        if signal { server.setProperties(path: d.path, interface: BlueZNames.device, changes) }
        if d.batteryExported {
            d.batteryExported = false
            if signal { server.removeInterfaces(path: d.path, names: [BlueZNames.battery]) }
        }
        // bluetoothd shuts every acquired socket down (btd_gatt_client_disconnected): the clients
        // see POLLHUP, then NotifyAcquired goes false (sock_hup -> destroy_sock).
        for c in d.gatt.characteristics { releaseAcquisition(c, signal: signal) }
        let dropGatt: Bool
        if case .resolvedBeforeGatt = d.resolveBehaviour { dropGatt = true } else { dropGatt = !options.gattCache }
        if dropGatt && d.gattExported { removeGatt(d) }
    }

    /// Ends the notification sessions and acquired sockets of `d`'s characteristics, without
    /// signals (their objects are going away).
    func dropNotifications(_ d: SimulatedDevice) {
        for c in d.gatt.characteristics {
            releaseAcquisition(c, signal: false)
            c.state.withLock { s in
                s.sessions.removeAll()
                s.active = false
            }
        }
    }

    /// Removes the GATT objects of `d` (and the notification sessions and acquired sockets with them).
    func removeGatt(_ d: SimulatedDevice) {
        dropNotifications(d)
        for s in d.gatt.services.reversed() { server.removeSubtree(path: s.path) }
        d.gattExported = false
        d.gattEpoch &+= 1
    }
}
