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
        guard let a = adapters[d.adapterPath], a.powered else { throw BluezError.notReady }
        switch d.connection {
        case .connected:
            return d.path
        case .connecting, .disconnecting:
            throw BluezError.inProgress
        case .disconnected:
            break
        }
        d.temporary = false
        d.connection = .connecting
        d.linkGeneration &+= 1
        let generation = d.linkGeneration
        logger.debug("connecting", metadata: ["address": "\(d.spec.address)"])
        let delay = d.spec.connectDelay ?? settings.connectDelay
        await sleep(delay)
        guard d.linkGeneration == generation, d.connection == .connecting else {
            throw BluezError.failed("le-connection-abort-by-local")
        }
        guard d.inRange, a.powered else {
            if settings.connectTimeout > delay { await sleep(settings.connectTimeout - delay) }
            if d.linkGeneration == generation {
                d.connection = .disconnected
                d.linkGeneration &+= 1
            }
            logger.info("connection failed: peripheral not in range", metadata: ["address": "\(d.spec.address)"])
            throw viaConnectDevice ? DBusError("org.bluez.Failed", "") : BluezError.failed("le-connection-abort-by-local")
        }
        d.connection = .connected
        if !d.exported { exportDevice(d) }
        server.setProperties(path: d.path, interface: BluezNames.device, ["Connected": .bool(true)])
        logger.info("connected", metadata: ["address": "\(d.spec.address)"])
        let path = d.path
        Task { [weak self] in
            await self?.resolveServices(device: path, generation: generation)
        }
        return d.path
    }

    /// Exports the GATT objects (first connection, or every connection without the cache) and sets
    /// `ServicesResolved`; notification sessions that survived a disconnect resume.
    func resolveServices(device path: String, generation: UInt64) async {
        guard let d0 = devices[path] else { return }
        await sleep(d0.spec.resolveDelay ?? settings.resolveDelay)
        guard let d = devices[path], d.linkGeneration == generation, d.connection == .connected else { return }
        if !d.gattExported {
            var uuids = Set(d.spec.advertisedServices)
            uuids.formUnion(d.gatt.resolvedUUIDs)
            let sorted = uuids.sorted()
            if server.property(path: d.path, interface: BluezNames.device, name: "UUIDs") != .stringArray(sorted) {
                server.setProperties(path: d.path, interface: BluezNames.device, ["UUIDs": .stringArray(sorted)])
            }
            exportGatt(d)
        }
        d.servicesResolved = true
        server.setProperties(path: d.path, interface: BluezNames.device, ["ServicesResolved": .bool(true)])
        logger.info("services resolved", metadata: ["address": "\(d.spec.address)"])
        for c in d.gatt.characteristics { activate(c) }
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
            linkLost(d)
            logger.info("disconnected", metadata: ["address": "\(d.spec.address)"])
        }
    }

    /// The link is gone (Disconnect done, power off, out of range, dropped): one
    /// `PropertiesChanged {ServicesResolved: false, Connected: false}` as bluetoothd sends it.
    func linkLost(_ d: SimulatedDevice) {
        d.linkGeneration &+= 1
        let wasUp = d.connection == .connected || d.connection == .disconnecting
        d.connection = .disconnected
        for c in d.gatt.characteristics { c.state.withLock { $0.active = false } }
        guard wasUp else { return }
        var changes: [String: DBusValue] = ["Connected": .bool(false)]
        if d.servicesResolved { changes["ServicesResolved"] = .bool(false) }
        d.servicesResolved = false
        server.setProperties(path: d.path, interface: BluezNames.device, changes)
        if !options.gattCache && d.gattExported {
            for c in d.gatt.characteristics { c.state.withLock { $0.sessions.removeAll() } }
            for s in d.gatt.services.reversed() { server.removeSubtree(path: s.path) }
            d.gattExported = false
        }
    }

    func pair(device path: String) async throws(DBusError) {
        let d = try device(path)
        if d.paired { throw BluezError.alreadyExists }
        if d.connection != .connected { _ = try await establishLink(d, viaConnectDevice: false) }
        await sleep(.milliseconds(100))
        guard d.connection == .connected else { throw BluezError.failed("Authentication Failed") }
        d.paired = true
        d.temporary = false
        server.setProperties(path: d.path, interface: BluezNames.device, ["Paired": .bool(true), "Bonded": .bool(true)])
    }
}
