import BridgeCore

/// Which devices get a session, the stored peripherals, and the sessions' reports.
extension SupervisorCore {
    // MARK: Sessions

    /// Starts a session for a device if the configuration wants it and its address has none, through the
    /// adapter ``place(_:connectNow:now:tree:_:)`` chooses among those whose object of it the tree has.
    package mutating func consider(_ path: String, connectNow: Bool = false, now: Instant, tree: Tree, _ out: inout [Action]) {
        guard !sessions.contains(path), !stopping, isReady(BlueZNames.adapterName(of: path)), let seen = tree.devices[path],
              sessionOf[seen.address.description] == nil
        else { return }
        let address = seen.address
        let name = seen.name ?? seen.alias
        let deviceConfig = config.device(address: address, name: name)
        let wanted = Set(config.bluetooth.services)
        let advertises = seen.uuids.contains { wanted.contains($0) }
        var policy = deviceConfig?.connection ?? .always
        if deviceConfig == nil && !advertises && !isStored(address.description) {
            // `advertisements: decodable`: an advertiser a decoder understands, never one it does not.
            guard config.bluetooth.advertisements == .decodable, Self.decodable(seen, families: families) else {
                out.append(.log(.trace, "ignoring \(seen.address) (\(name ?? "no name")): no wanted service"))
                return
            }
            policy = .advertisement(bindkey: nil, timeout: .seconds(600))
        }
        let segment = topics.deviceSegment(address: address, config: deviceConfig)
        guard clusterAdmits(segment: segment, address: address, policy: policy, &out) else {
            // A link this bridge does not serve (left by an earlier run that crashed: bluetoothd keeps the links of
            // a client that died): another bridge may own the device, and a peripheral takes one link.
            for object in objects(of: address.description, tree: tree) where object.connected {
                out.append(.log(.notice, "\(address) (\(segment)) is connected but not served by this bridge: disconnecting it"))
                out.append(.disconnectDevice(path: object.path))
            }
            return
        }
        guard let dev = place(seen, connectNow: connectNow || isStored(address.description), now: now, tree: tree, &out) else { return }
        let path = dev.path
        let plan = SessionPlan(
            path: path, address: address, addressType: dev.addressType, segment: segment, config: deviceConfig,
            connectNow: connectNow || isStored(address.description), seed: makeSeed(), policy: policy)
        var record = DeviceRecord(path: path, segment: segment, address: address, addressType: dev.addressType, policy: policy)
        record.profile = deviceConfig?.profile?.id
        addRecord(record, object: dev)
        out.append(.log(.info, "found \(address) (\(name ?? "no name")) → \(topics.baseTopic)/\(segment) [\(policy.name)]"))
        out.append(.startSession(plan))
        listDevices(force: false, &out)
    }

    package mutating func deviceRemoved(_ path: String, now: Instant, _ out: inout [Action]) {
        guard sessions.contains(path) else { return }
        let address = BlueZNames.address(fromDevicePath: path)
        if case .advertisement? = devices[path]?.policy {
            // A temporary device that went quiet: its session keeps waiting for it.
            out.append(.log(.debug, "BlueZ dropped advertiser \(address) from its tree"))
        } else {
            out.append(.log(.notice, "BlueZ dropped device \(address) from its tree: rediscovering it"))
        }
        out.append(.send(path: path, .deviceRemoved))
        if isStored(address) { reconnectStoredAt[address] = now.advanced(by: Self.storedReconnectDelay) }
    }

    package mutating func deviceChanged(_ path: String, _ changed: [String], now: Instant, tree: Tree, _ out: inout [Action]) {
        if changed.contains("RSSI") || changed.contains("ManufacturerData") || changed.contains("ServiceData") {
            radios[BlueZNames.adapterName(of: path)]?.discovery.lastAdvertisement = now
        }
        guard sessions.contains(path) else {
            if needsSnapshot(path: path, changed: changed) { consider(path, now: now, tree: tree, &out) }
            return
        }
        guard let dev = tree.devices[path] else { return }
        if changed.contains("Connected") { out.append(.send(path: path, .connectedChanged(dev.connected))) }
        if changed.contains("ServicesResolved") { out.append(.send(path: path, .servicesResolved(dev.servicesResolved))) }
    }

    // MARK: Stored peripherals

    /// Connects the stored peripherals straight away: the device object BlueZ still has (on the adapter
    /// ``place(_:connectNow:now:tree:_:)`` chooses), else `Adapter1.ConnectDevice` with the stored address type on the
    /// ready adapter with the most free slots, else the scan finds it. With `holdingScan`, the scan (of the
    /// adapter each goes through) waits until each first attempt returned, at most ``DiscoveryState/storedHeadStart``.
    package mutating func connectStored(
        only address: String? = nil, holdingScan: Bool = false, now: Instant, tree: Tree, _ out: inout [Action]
    ) {
        for p in stored where (address == nil || p.address == address) && clusterServes(address: p.address)
            && sessionOf[p.address] == nil
        {
            guard let adapter = storedAdapter(tree) else { return }
            let objects = self.objects(of: p.address, tree: tree)
            if let first = objects.first {
                out.append(.log(.info, "stored peripheral \(p.address): BlueZ still knows it, connecting"))
                consider(sessionOf[p.address] ?? first.path, connectNow: true, now: now, tree: tree, &out)
                // An advertisement device sends no Connect.
                if holdingScan, let path = sessionOf[p.address], let record = devices[path] {
                    if case .advertisement = record.policy {} else { hold(path) }
                }
                continue
            }
            // Several adapters: one ConnectDevice at a time per peripheral (one link).
            if severalAdapters && connectingStored[p.address] != nil { continue }
            let path = BlueZNames.devicePath(adapterName: adapter, address: p.address)
            out.append(.log(.info, "stored peripheral \(p.address): not in BlueZ's tree, trying ConnectDevice"))
            if holdingScan { hold(path) }
            if severalAdapters { connectingStored[p.address] = path }
            out.append(.connectDevice(address: p.address, addressType: p.addressType, path: path))
        }
        for name in radios.keys.sorted() {
            guard let count = radios[name]?.discovery.heldFor.count, count > 0 else { continue }
            radios[name]?.discovery.heldUntil = now.advanced(by: DiscoveryState.storedHeadStart)
            out.append(.log(.debug, "the scan waits for the first Connect of \(count) stored peripheral(s)"))
        }
    }

    /// Holds the scan of `path`'s adapter for it.
    private mutating func hold(_ path: String) {
        radios[BlueZNames.adapterName(of: path)]?.discovery.heldFor.insert(path)
    }

    package mutating func forgetStored(_ address: String) {
        storedAddresses.remove(address)
        stored.removeAll { $0.address == address }
    }

    /// `bridge/request/unpair` (SPEC §11): the bond goes with BlueZ's device object (`RemoveDevice`); the session
    /// ends (it disconnects), and the scan finds the device again, which pairs anew when an operation needs it.
    /// The state file and Home Assistant keep it.
    package mutating func unpair(_ record: DeviceRecord, _ out: inout [Action]) {
        out.append(.log(.notice, "removing the bond of \(record.address) (\(record.segment)) on request"))
        out.append(.send(path: record.path, .stop))
        out.append(.removeDevice(path: record.path))
    }

    /// Forgets a device: the state file, Home Assistant, its session, BlueZ's object.
    package mutating func forget(_ path: String, _ out: inout [Action]) {
        guard let record = removeRecord(path) else { return }
        let address = record.address.description
        out.append(.log(.notice, "forgetting \(record.address) on request"))
        forgetStored(address)
        placement.remove(address)
        pendingMoves[address] = nil
        placingAt[address] = nil
        placeOpen.remove(address)
        out.append(.forgetStored(address: address))
        out.append(.homeAssistantRemove(path: path))
        out.append(.forgetLastValues(segment: record.segment))
        // The session stays in `sessions` until its loop ended, so no second one starts meanwhile.
        out.append(.send(path: path, .stop))
        out.append(.unregister(path: path))
        out.append(.publishAvailability(segment: record.segment, online: false))
        listDevices(force: false, &out)
        out.append(.removeDevice(path: path))
    }

    // MARK: Reports

    /// A session's report: its registry entry, the scan, discovery configs, the state file.
    package mutating func report(_ event: Event, now: Instant, tree: Tree, _ out: inout [Action]) {
        switch event {
        case .availability(let path, let online):
            update(path, &out) { $0.available = online }
            listDevices(force: false, &out)
            updateDiscovery(tree: tree, &out)
        case .linkChanged(let path, let up):
            if sessionOf[BlueZNames.address(fromDevicePath: path)] == path {
                placement.link(BlueZNames.address(fromDevicePath: path), on: up ? BlueZNames.adapterName(of: path) : nil)
            }
            update(path, &out) { record in
                record.connected = up
                if up { record.connects += 1 }
            }
            listDevices(force: false, &out)
        case .connectReturned(let path):
            storedConnectReturned(path, now: now, tree: tree, &out)
        case .mapped(let path, let mapped):
            let profile = devices[path].flatMap { config.device(address: $0.address, name: mapped.name)?.profile?.profile }
            guard update(path, &out, { record in
                record.services = mapped.serviceSegments
                record.manufacturer = mapped.information.manufacturer ?? profile?.manufacturer
                record.model = mapped.information.model ?? profile?.model
            }), let record = devices[path] else { return }
            if config.homeAssistant.discovery {
                out.append(.homeAssistantPublish(
                    path: path,
                    HomeAssistantDiscovery.Peripheral(
                        device: record.segment, address: record.address.description, name: mapped.name,
                        information: mapped.information, characteristics: mapped.discovery,
                        profile: config.device(address: record.address, name: mapped.name)?.profile),
                    hold: homeAssistant.holds(at: now)))
            }
            let address = record.address.description
            out.append(.remember(address: address, addressType: record.addressType, mapped))
            if remembers && storedAddresses.insert(address).inserted {
                stored.append((address, record.addressType))
            }
            listDevices(force: false, &out)
        case .advertised(let path, let advertised, let name):
            update(path, &out) { record in
                record.manufacturer = advertised.manufacturer ?? record.manufacturer
                record.model = advertised.model ?? record.model
            }
            listDevices(force: false, &out)
            guard let record = devices[path], config.homeAssistant.discovery else { return }
            out.append(.homeAssistantPublish(
                path: path,
                HomeAssistantDiscovery.Peripheral(
                    device: record.segment, address: record.address.description, name: name, characteristics: [],
                    advertised: advertised),
                hold: homeAssistant.holds(at: now)))
        case .unreadable(let path, let uuid):
            guard let record = devices[path] else { return }
            out.append(.markUnreadable(address: record.address.description, uuid: uuid))
        default:
            break
        }
    }
}
