import BlueZ
import BridgeCore

/// The adapter, the scan and the scan watchdog.
extension SupervisorCore {
    // MARK: Adapter

    mutating func adapterCheck(now: BridgeInstant, tree: Tree, _ out: inout [Action]) {
        guard tree.bluezAvailable else { return }
        guard let adapter = tree.adapter else {
            let have = tree.adapters
            out.append(.log(
                .error,
                "adapter \(config.bluetooth.adapter) (\(adapterPath)) not found; BlueZ has: \(have.isEmpty ? "no adapters" : have.joined(separator: ", ")). Waiting for it."))
            adapterReady = false
            return
        }
        if !adapter.powered {
            adapterReady = false
            guard !poweringOn else { return }
            out.append(.log(.notice, "adapter \(config.bluetooth.adapter) is powered off: powering it on"))
            poweringOn = true
            out.append(.powerOn)
            return  // The Powered change brings us back here.
        }
        guard !adapterReady else { return }
        adapterReady = true
        out.append(.log(.info, "adapter \(config.bluetooth.adapter) (\(adapter.address ?? "?")) is powered"))
        // Stored peripherals first, without waiting for a scan result; the scan waits for their
        // first Connect (bounded): some controllers connect badly while discovering.
        connectStored(holdingScan: true, now: now, tree: tree, &out)
        for path in tree.devices.keys.sorted() { consider(path, now: now, tree: tree, &out) }
        discovery.wanted = true
        if let period = config.bluetooth.scanWatchdog { discovery.watchdogAt = now.advanced(by: period / 4) }
        registerMonitorIfOffered(tree: tree, &out)
        ensureDiscovery(tree: tree, &out)
    }

    mutating func adapterLost() {
        adapterReady = false
        discovery.monitor = .off
        discovery.wanted = false
        discovery.ours = false
        discovery.watchdogAt = nil
        discovery.retryAt = nil
        discovery.heldFor.removeAll()
        discovery.heldUntil = nil
    }

    mutating func adapterChanged(_ changed: [String], now: BridgeInstant, tree: Tree, _ out: inout [Action]) {
        if changed.contains("Powered") {
            let powered = tree.adapter?.powered ?? false
            if powered != adapterReady {
                out.append(.log(.notice, "adapter \(config.bluetooth.adapter) powered \(powered ? "on" : "off")"))
                if !powered { adapterLost() }
                adapterCheck(now: now, tree: tree, &out)
            }
        }
        if changed.contains("Discovering") {
            let discovering = tree.adapter?.discovering ?? false
            if !discovering { discovery.ours = false }
            if !discovering && discovery.wanted && adapterReady && discoveryNeeded() && !discovery.starting {
                out.append(.log(.info, "discovery stopped behind our back: restarting it"))
                discovery.retryAt = now.advanced(by: .seconds(1))
            }
        }
    }

    // MARK: Passive scanning

    /// Registers an advertisement monitor when advertisements are listened to and the adapter
    /// offers `AdvertisementMonitorManager1` (BlueZ 5.66 only with `--experimental`); until it is
    /// active, and if it fails, the active scan with `DuplicateData` does the work.
    mutating func registerMonitorIfOffered(tree: Tree, _ out: inout [Action]) {
        guard listensToAdvertisements, discovery.monitor == .off, tree.adapter?.offersMonitor == true else { return }
        discovery.monitor = .registering
        out.append(.registerMonitor)
    }

    mutating func monitorRegistered(_ error: BlueZError?, now: BridgeInstant, tree: Tree, _ out: inout [Action]) {
        // AlreadyExists: still registered from before the adapter went off and on again.
        if let error, error.code != .alreadyExists {
            discovery.monitor = .failed
            out.append(.log(.warning, "RegisterMonitor failed (\(error)): scanning actively for advertisements instead"))
        } else {
            discovery.monitor = .active
            out.append(.log(
                .info,
                "advertisement monitor registered on \(config.bluetooth.adapter): broadcast sensors are heard without a scan"))
        }
        updateDiscovery(tree: tree, &out)
    }

    /// Whether a decoder understands what the device advertises (without a bindkey).
    static func decodable(_ dev: BlueZDevice) -> Bool {
        guard !(dev.serviceData.isEmpty && dev.manufacturerData.isEmpty) else { return false }
        let frame = AdvertisementFrame(address: dev.address, serviceData: dev.serviceData, manufacturerData: dev.manufacturerData)
        if case .success? = AdvertisementDecoder.decode(frame, bindkey: nil) { return true }
        return false
    }

    // MARK: Discovery

    /// Whether a wanted peripheral is missing (SPEC §5): with a service filter or a name
    /// pattern every new advertiser may be wanted, so the scan keeps running; when every wanted
    /// peripheral is named by address and connected, it stops.
    func discoveryNeeded() -> Bool {
        // With an active monitor, advertisement devices need no scan.
        let passive = discovery.monitor == .active
        // A cluster member keeps hearing the devices other bridges own: its sightings must stay current.
        if clusterGate != nil { return true }
        if !config.bluetooth.services.isEmpty || (listensToAdvertisements && !passive) { return true }
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

    mutating func ensureDiscovery(tree: Tree, _ out: inout [Action]) {
        guard adapterReady, discovery.wanted, !discovery.starting, !stopping, discovery.heldFor.isEmpty,
              discoveryNeeded()
        else { return }
        if tree.adapter?.discovering == true && discovery.ours { return }
        discovery.starting = true
        // A UUID filter hides peripherals that `devices` entries match by name or address.
        // Advertisers (SPEC §7) need every advertisement of every device: no UUID filter, and
        // BlueZ's duplicate filter off (`DuplicateData: true`).
        let advertisements = listensToAdvertisements
        let uuids = config.devices.isEmpty && !advertisements ? config.bluetooth.services.map(\.uuidString) : []
        out.append(.startDiscovery(uuids: uuids, duplicateData: advertisements))
    }

    /// A stored peripheral's first connection attempt returned (or its head start is over, with
    /// `path` nil): the scan may start once none is left.
    mutating func storedConnectReturned(_ path: String?, now: BridgeInstant, tree: Tree, _ out: inout [Action]) {
        guard !discovery.heldFor.isEmpty else { return }
        if let path {
            guard discovery.heldFor.remove(path) != nil else { return }
        } else {
            out.append(.log(.info, "stored peripherals not connected within \(DiscoveryState.storedHeadStart): scanning"))
            discovery.heldFor.removeAll()
        }
        guard discovery.heldFor.isEmpty else { return }
        discovery.heldUntil = nil
        ensureDiscovery(tree: tree, &out)
    }

    mutating func discoveryFinished(_ error: BlueZError?, now: BridgeInstant, tree: Tree, _ out: inout [Action]) {
        discovery.starting = false
        guard let error else {
            discovery.ours = true
            // The watchdog measures the silence of this scan, not the time since the last one.
            discovery.lastAdvertisement = now
            let filter = config.devices.isEmpty && !config.bluetooth.services.isEmpty && !listensToAdvertisements
            out.append(.log(
                .info,
                "scanning on \(config.bluetooth.adapter) for \(filter ? "services " + config.bluetooth.services.map(\.shortForm).joined(separator: ", ") : "all LE peripherals")"))
            return
        }
        if error.code == .inProgress && tree.adapter?.discovering == true {
            // Our own session is still running (its Discovering=false came late): keep it.
            discovery.ours = true
            out.append(.log(.debug, "StartDiscovery: InProgress while discovering; keeping the running scan"))
        } else if error.code == .inProgress {
            out.append(.log(.notice, "StartDiscovery: InProgress; stopping the scan and retrying"))
            out.append(.stopDiscovery)
            discovery.retryAt = now.advanced(by: .seconds(1))
        } else {
            out.append(.log(.warning, "StartDiscovery failed: \(error); retrying in 5 s"))
            discovery.retryAt = now.advanced(by: .seconds(5))
        }
    }

    /// Starts or stops the scan as ``discoveryNeeded()`` says.
    mutating func updateDiscovery(tree: Tree, _ out: inout [Action]) {
        guard adapterReady, discovery.wanted, !stopping else { return }
        if discoveryNeeded() {
            ensureDiscovery(tree: tree, &out)
        } else if discovery.ours {
            out.append(.log(
                .info,
                discovery.monitor == .active
                    ? "no peripheral is missing (broadcast sensors are monitored passively): stopping the scan"
                    : "every wanted peripheral is connected: stopping the scan"))
            discovery.ours = false
            out.append(.stopDiscovery)
        }
    }

    /// Restarts a scan that has seen nothing for `bluetooth.scan_watchdog` while peripherals are
    /// missing; `lastAdvertisement`: the advertisement router's last one. Without a
    /// `scan_watchdog` (`nil`) there is no watchdog.
    mutating func scanWatchdog(now: BridgeInstant, tree: Tree, lastAdvertisement: BridgeInstant?, _ out: inout [Action]) {
        guard let period = config.bluetooth.scanWatchdog else {
            discovery.watchdogAt = nil
            return
        }
        discovery.watchdogAt = now.advanced(by: period / 4)
        guard adapterReady, discovery.wanted, discovery.ours, !discovery.starting, discoveryNeeded() else { return }
        // Missing: a managed device that is not online, or a wanted address (configured or stored)
        // that is not online, e.g. one BlueZ dropped from its tree, which only the scan finds again.
        var wanted = storedAddresses
        for d in config.devices { if case .address(let a) = d.match { wanted.insert(a.description) } }
        let missing = devices.isEmpty || devices.values.contains { !$0.available } || !wanted.isSubset(of: onlineAddresses)
        let last = max(discovery.lastAdvertisement, lastAdvertisement ?? discovery.lastAdvertisement)
        guard missing, last.duration(to: now) > period else { return }
        out.append(.log(.warning, "scan watchdog: no advertisement for \(period) while peripherals are missing; restarting the scan"))
        discovery.lastAdvertisement = now
        discovery.ours = false
        discovery.starting = true
        out.append(.restartDiscovery)
    }
}
