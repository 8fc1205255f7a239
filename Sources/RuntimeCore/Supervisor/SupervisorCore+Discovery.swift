import BridgeCore

/// The adapter, the scan and the scan watchdog.
extension SupervisorCore {
    // MARK: Adapters

    /// Checks these adapters (names, in use): powers on those that are off (unless left off), and starts
    /// using those that just became ready: stored peripherals first, the devices BlueZ has, then the scan.
    package mutating func adapterCheck(_ names: [String], now: Instant, tree: Tree, _ out: inout [Action]) {
        guard tree.bluezAvailable else { return }
        var newlyReady: [String] = []
        for name in names {
            var radio = radios[name] ?? RadioState()
            defer { radios[name] = radio }
            guard let adapter = tree.adapters[name] else {
                let have = tree.adapters.keys.sorted().map(BlueZNames.adapterPath)
                out.append(.log(
                    .error,
                    "adapter \(name) (\(BlueZNames.adapterPath(name))) not found; BlueZ has: \(have.isEmpty ? "no adapters" : have.joined(separator: ", ")). Waiting for it."))
                radio.ready = false
                continue
            }
            if !adapter.powered {
                radio.ready = false
                guard !radio.poweringOn, !radio.leftOff else { continue }
                out.append(.log(.notice, "adapter \(name) is powered off: powering it on"))
                radio.poweringOn = true
                out.append(.powerOn(adapter: name))
                continue  // The Powered change brings us back here.
            }
            guard !radio.ready else { continue }
            radio.ready = true
            radio.leftOff = false
            placement.adapterUp(name)
            out.append(.log(.info, "adapter \(name) (\(adapter.address ?? "?")) is powered"))
            newlyReady.append(name)
        }
        guard !newlyReady.isEmpty else { return }
        // Stored peripherals first, without waiting for a scan result; the scan waits for their
        // first Connect (bounded): some controllers connect badly while discovering.
        connectStored(holdingScan: true, now: now, tree: tree, &out)
        for path in tree.devices.keys.sorted() where newlyReady.contains(BlueZNames.adapterName(of: path)) {
            consider(path, now: now, tree: tree, &out)
        }
        for name in newlyReady {
            radios[name]?.discovery.wanted = true
            if let period = config.bluetooth.scanWatchdog { radios[name]?.discovery.watchdogAt = now.advanced(by: period / 4) }
            registerMonitorIfOffered(name, tree: tree, &out)
            ensureDiscovery(name, tree: tree, &out)
        }
    }

    package mutating func adapterLost(_ name: String) {
        guard var radio = radios[name] else { return }
        radio.ready = false
        radio.discovery.monitor = .off
        radio.discovery.wanted = false
        radio.discovery.ours = false
        radio.discovery.watchdogAt = nil
        radio.discovery.retryAt = nil
        radio.discovery.heldFor.removeAll()
        radio.discovery.heldUntil = nil
        radios[name] = radio
        placement.adapterDown(name)
        connectingStored = connectingStored.filter { BlueZNames.adapterName(of: $0.value) != name }
    }

    package mutating func adapterChanged(_ name: String, _ changed: [String], now: Instant, tree: Tree, _ out: inout [Action]) {
        if changed.contains("Powered") {
            let powered = tree.adapters[name]?.powered ?? false
            if powered != (radios[name]?.ready ?? false) {
                out.append(.log(.notice, "adapter \(name) powered \(powered ? "on" : "off")"))
                if !powered {
                    adapterDown(name, &out)
                    // Someone turned it off while another adapter serves: leave it off (SPEC §10).
                    if !readyAdapters.isEmpty {
                        radios[name]?.leftOff = true
                        out.append(.log(.notice, "adapter \(name) is left off while the other adapters serve; power it on to use it again"))
                    }
                }
                adapterCheck([name], now: now, tree: tree, &out)
            }
        }
        if changed.contains("Discovering"), var radio = radios[name] {
            let discovering = tree.adapters[name]?.discovering ?? false
            if !discovering { radio.discovery.ours = false }
            if !discovering && radio.discovery.wanted && radio.ready && discoveryNeeded(name) && !radio.discovery.starting {
                out.append(.log(.info, "discovery stopped behind our back: restarting it"))
                radio.discovery.retryAt = now.advanced(by: .seconds(1))
            }
            radios[name] = radio
        }
    }

    // MARK: Passive scanning

    /// Registers an advertisement monitor when advertisements are listened to and the adapter
    /// offers `AdvertisementMonitorManager1` (BlueZ 5.66 only with `--experimental`); until it is
    /// active, and if it fails, the active scan with `DuplicateData` does the work.
    package mutating func registerMonitorIfOffered(_ name: String, tree: Tree, _ out: inout [Action]) {
        guard listensToAdvertisements, radios[name]?.discovery.monitor == .off, tree.adapters[name]?.offersMonitor == true
        else { return }
        radios[name]?.discovery.monitor = .registering
        out.append(.registerMonitor(adapter: name))
    }

    package mutating func monitorRegistered(_ name: String, _ error: BluetoothError?, now: Instant, tree: Tree, _ out: inout [Action]) {
        guard radios[name] != nil else { return }
        // AlreadyExists: still registered from before the adapter went off and on again.
        if let error, error.code != .alreadyExists {
            radios[name]?.discovery.monitor = .failed
            out.append(.log(.warning, "RegisterMonitor failed (\(error)): scanning actively for advertisements instead"))
        } else {
            radios[name]?.discovery.monitor = .active
            out.append(.log(
                .info,
                "advertisement monitor registered on \(name): broadcast sensors are heard without a scan"))
        }
        updateDiscovery(tree: tree, &out)
    }

    /// Whether a decoder understands what the device advertises without a bindkey (SPEC §13: an
    /// advertiser whose frames need a key is not picked up); its name and advertised UUIDs tell
    /// the families that have no service UUID or company id of their own.
    package static func decodable(_ dev: DeviceSnapshot, families: [any AdvertisementFamily.Type] = AdvertisementDecoder.families) -> Bool {
        guard !(dev.serviceData.isEmpty && dev.manufacturerData.isEmpty) else { return false }
        let frame = AdvertisementFrame(
            address: dev.address, serviceData: dev.serviceData, manufacturerData: dev.manufacturerData, name: dev.localName,
            serviceUUIDs: dev.uuids)
        return AdvertisementDecoder.claimAnyEntry(frame, bindkey: nil, families: families)?.decoded != nil
    }

    // MARK: Discovery

    /// Whether a wanted peripheral is missing (SPEC §5): with a service filter or a name
    /// pattern every new advertiser may be wanted, so the scan keeps running; when every wanted
    /// peripheral is named by address and connected, it stops.
    package func discoveryNeeded(_ name: String) -> Bool {
        // With an active monitor, advertisement devices need no scan.
        let passive = radios[name]?.discovery.monitor == .active
        // A cluster member keeps hearing the devices other bridges own: its sightings must stay current. A `scan`
        // request hears every advertiser (SPEC §14).
        if cluster != nil || !scans.isEmpty { return true }
        // Trackers are heard only by an active scan: phones and tags match no monitor pattern.
        if !config.bluetooth.services.isEmpty || !config.trackers.isEmpty || (listensToAdvertisements && !passive) {
            return true
        }
        var addresses = storedAddresses
        for d in config.devices {
            if passive, case .advertisement = d.connection { continue }
            switch d.match {
            case .name: return true
            case .address(let a): addresses.insert(a.description)
            }
        }
        return !addresses.isSubset(of: onlineAddresses)
    }

    private var onlineAddresses: Set<String> {
        Set(devices.values.filter(\.available).map(\.address.description))
    }

    package mutating func ensureDiscovery(_ name: String, tree: Tree, _ out: inout [Action]) {
        guard let discovery = radios[name]?.discovery, radios[name]?.ready == true, discovery.wanted, !discovery.starting,
              !stopping, discovery.heldFor.isEmpty, discoveryNeeded(name)
        else { return }
        if tree.adapters[name]?.discovering == true && discovery.ours { return }
        radios[name]?.discovery.starting = true
        // A UUID filter hides peripherals that `devices` entries match by name or address.
        // Advertisers (SPEC §7) need every advertisement of every device: no UUID filter, and
        // BlueZ's duplicate filter off (`DuplicateData: true`).
        let filter = discoveryFilter
        out.append(.startDiscovery(adapter: name, uuids: filter.uuids, duplicateData: filter.duplicateData))
    }

    /// A stored peripheral's first connection attempt returned (or its head start is over, with
    /// `path` nil): the scan may start once none is left.
    package mutating func storedConnectReturned(_ path: String, now: Instant, tree: Tree, _ out: inout [Action]) {
        storedConnectReturned(path, adapter: BlueZNames.adapterName(of: path), now: now, tree: tree, &out)
    }

    /// The same on one adapter; `path` nil: its head start is over.
    package mutating func storedConnectReturned(_ path: String?, adapter name: String, now: Instant, tree: Tree, _ out: inout [Action]) {
        guard let held = radios[name]?.discovery.heldFor, !held.isEmpty else { return }
        if let path {
            guard radios[name]?.discovery.heldFor.remove(path) != nil else { return }
        } else {
            out.append(.log(.info, "stored peripherals not connected within \(DiscoveryState.storedHeadStart): scanning"))
            radios[name]?.discovery.heldFor.removeAll()
        }
        guard radios[name]?.discovery.heldFor.isEmpty == true else { return }
        radios[name]?.discovery.heldUntil = nil
        ensureDiscovery(name, tree: tree, &out)
    }

    package mutating func discoveryFinished(_ name: String, _ error: BluetoothError?, now: Instant, tree: Tree, _ out: inout [Action]) {
        guard var discovery = radios[name]?.discovery else { return }
        defer { radios[name]?.discovery = discovery }
        discovery.starting = false
        guard let error else {
            discovery.ours = true
            // The watchdog measures the silence of this scan, not the time since the last one.
            discovery.lastAdvertisement = now
            let filter = config.devices.isEmpty && !config.bluetooth.services.isEmpty && !listensToAdvertisements
            out.append(.log(
                .info,
                "scanning on \(name) for \(filter ? "services " + config.bluetooth.services.map(\.shortForm).joined(separator: ", ") : "all LE peripherals")"))
            return
        }
        if error.code == .inProgress && tree.adapters[name]?.discovering == true {
            // Our own session is still running (its Discovering=false came late): keep it.
            discovery.ours = true
            out.append(.log(.debug, "StartDiscovery: InProgress while discovering; keeping the running scan"))
        } else if error.code == .inProgress {
            out.append(.log(.notice, "StartDiscovery: InProgress; stopping the scan and retrying"))
            out.append(.stopDiscovery(adapter: name))
            discovery.retryAt = now.advanced(by: .seconds(1))
        } else {
            out.append(.log(.warning, "StartDiscovery failed: \(error); retrying in 5 s"))
            discovery.retryAt = now.advanced(by: .seconds(5))
        }
    }

    /// Starts or stops the scans as ``discoveryNeeded(_:)`` says.
    package mutating func updateDiscovery(tree: Tree, _ out: inout [Action]) {
        for name in radios.keys.sorted() {
            guard let discovery = radios[name]?.discovery, radios[name]?.ready == true, discovery.wanted, !stopping
            else { continue }
            if discoveryNeeded(name) {
                ensureDiscovery(name, tree: tree, &out)
            } else if discovery.ours {
                out.append(.log(
                    .info,
                    discovery.monitor == .active
                        ? "no peripheral is missing (broadcast sensors are monitored passively): stopping the scan"
                        : "every wanted peripheral is connected: stopping the scan"))
                radios[name]?.discovery.ours = false
                out.append(.stopDiscovery(adapter: name))
            }
        }
    }

    /// Restarts a scan that has seen nothing for `bluetooth.scan_watchdog` while peripherals are
    /// missing; `lastAdvertisement`: the advertisement router's last one. Without a
    /// `scan_watchdog` (`nil`) there is no watchdog.
    package mutating func scanWatchdog(
        _ name: String, now: Instant, tree: Tree, lastAdvertisement: Instant?, _ out: inout [Action]
    ) {
        guard var discovery = radios[name]?.discovery else { return }
        defer { radios[name]?.discovery = discovery }
        guard let period = config.bluetooth.scanWatchdog else {
            discovery.watchdogAt = nil
            return
        }
        discovery.watchdogAt = now.advanced(by: period / 4)
        guard radios[name]?.ready == true, discovery.wanted, discovery.ours, !discovery.starting, discoveryNeeded(name)
        else { return }
        // Missing: a managed device that is not online, or a wanted address (configured or stored)
        // that is not online, e.g. one BlueZ dropped from its tree, which only the scan finds again.
        var wanted = storedAddresses
        for d in config.devices { if case .address(let a) = d.match { wanted.insert(a.description) } }
        let missing = devices.isEmpty || devices.values.contains { !$0.available } || !wanted.isSubset(of: onlineAddresses)
        let last = [discovery.lastAdvertisement, lastAdvertisement].compactMap { $0 }.max() ?? startedAt
        guard missing, last.duration(to: now) > period else { return }
        out.append(.log(.warning, "scan watchdog: no advertisement for \(period) while peripherals are missing; restarting the scan"))
        discovery.lastAdvertisement = now
        discovery.ours = false
        discovery.starting = true
        out.append(.restartDiscovery(adapter: name))
    }
}
