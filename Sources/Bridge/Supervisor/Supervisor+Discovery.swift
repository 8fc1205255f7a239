import BlueZ
import BridgeCore
import DBusKit

/// The scan's state.
struct DiscoveryState: Sendable {
    /// The adapter is up and the scan may run.
    var wanted = false
    /// A `StartDiscovery` of ours is under way or running.
    var starting = false
    var ours = false
    var retryAt: BridgeInstant?
    var watchdogAt: BridgeInstant?
    var lastAdvertisement = BridgeInstant(offset: .zero)
    /// Passive scanning through an advertisement monitor.
    var monitor = MonitorState.off
    /// Stored peripherals whose first `Connect` (or `ConnectDevice`) has not returned yet: the
    /// scan waits for them (SPEC §5, connect before scanning), at most until ``heldUntil``.
    var heldFor: Set<String> = []
    var heldUntil: BridgeInstant?
    /// How long stored peripherals get before the scan starts anyway.
    static let storedHeadStart: Duration = .seconds(2)

    enum MonitorState: Sendable, Equatable {
        /// Not offered (BlueZ without `--experimental`), not needed, or not tried yet.
        case off
        case registering
        /// Advertisements of decodable sensors arrive without a scan.
        case active
        /// `RegisterMonitor` failed: active scanning, as without it.
        case failed
    }
}

extension Supervisor {
    // MARK: Adapter

    func adapterCheck(_ group: inout DiscardingTaskGroup) {
        guard central.isAvailable else { return }
        guard let props = central.withTree({ $0.properties(path: adapterPath, interface: BlueZ.adapter) }) else {
            let have = central.withTree { $0.paths(with: BlueZ.adapter) }
            logger.error(
                "adapter \(config.bluetooth.adapter) (\(adapterPath)) not found; BlueZ has: \(have.isEmpty ? "no adapters" : have.joined(separator: ", ")). Waiting for it.")
            adapterReady = false
            return
        }
        if props["Powered"]?.bool != true {
            adapterReady = false
            guard !poweringOn else { return }
            logger.notice("adapter \(config.bluetooth.adapter) is powered off: powering it on")
            poweringOn = true
            let central = self.central, adapter = adapterPath, mailbox = self.mailbox
            group.addTask {
                do throws(BlueZError) {
                    try await central.setProperty(adapter, interface: BlueZ.adapter, name: "Powered", value: .bool(true))
                    mailbox.send(.powerFinished(error: nil))
                } catch {
                    mailbox.send(.powerFinished(error: error))
                }
            }
            return  // The Powered change brings us back here.
        }
        guard !adapterReady else { return }
        adapterReady = true
        logger.info("adapter \(config.bluetooth.adapter) (\(props["Address"]?.string ?? "?")) is powered")
        // Stored peripherals first, without waiting for a scan result; the scan waits for their
        // first Connect (bounded): some controllers connect badly while discovering.
        connectKnownPeripherals(holdingScan: true, &group)
        for dev in central.withTree({ $0.devices(adapter: adapterPath) }) { consider(dev.path, &group) }
        discovery.wanted = true
        discovery.watchdogAt = now.advanced(by: watchdogPeriod / 4)
        registerMonitorIfOffered(&group)
        ensureDiscovery(&group)
    }

    // MARK: Passive scanning

    /// The or-patterns of the monitor: the service data of every decoder (BTHome `fcd2`, pvvx and
    /// ATC1441 `181a`).
    static let monitorPatterns: [BlueZClient.MonitorPattern] = [.serviceData16(0xFCD2), .serviceData16(0x181A)]

    /// Registers an advertisement monitor when advertisements are listened to and the adapter
    /// offers `AdvertisementMonitorManager1` (BlueZ 5.66 only with `--experimental`); until it is
    /// active, and if it fails, the active scan with `DuplicateData` does the work.
    func registerMonitorIfOffered(_ group: inout DiscardingTaskGroup) {
        guard listensToAdvertisements, discovery.monitor == .off,
              central.withTree({ $0.properties(path: adapterPath, interface: BlueZClient.monitorManagerInterface) }) != nil
        else { return }
        discovery.monitor = .registering
        let central = self.central, adapter = adapterPath, mailbox = self.mailbox, patterns = Supervisor.monitorPatterns
        group.addTask {
            do throws(BlueZError) {
                try await central.registerAdvertisementMonitor(adapter: adapter, patterns: patterns)
                mailbox.send(.monitorRegistered(error: nil))
            } catch {
                mailbox.send(.monitorRegistered(error: error))
            }
        }
    }

    func monitorRegistered(_ error: BlueZError?, _ group: inout DiscardingTaskGroup) {
        // AlreadyExists: still registered from before the adapter went off and on again.
        if let error, error.code != .alreadyExists {
            discovery.monitor = .failed
            logger.warning("RegisterMonitor failed (\(error)): scanning actively for advertisements instead")
        } else {
            discovery.monitor = .active
            logger.info("advertisement monitor registered on \(config.bluetooth.adapter): broadcast sensors are heard without a scan")
        }
        updateDiscovery(&group)
    }

    func adapterLost() {
        adapterReady = false
        discovery.monitor = .off
        discovery.wanted = false
        discovery.ours = false
        discovery.watchdogAt = nil
        discovery.retryAt = nil
        discovery.heldFor.removeAll()
        discovery.heldUntil = nil
    }

    func adapterPropertiesChanged(_ changed: [String], _ group: inout DiscardingTaskGroup) {
        let props = central.withTree { $0.properties(path: adapterPath, interface: BlueZ.adapter) }
        if changed.contains("Powered") {
            let powered = props?["Powered"]?.bool ?? false
            if powered != adapterReady {
                logger.notice("adapter \(config.bluetooth.adapter) powered \(powered ? "on" : "off")")
                if !powered { adapterLost() }
                adapterCheck(&group)
            }
        }
        if changed.contains("Discovering") {
            let discovering = props?["Discovering"]?.bool ?? false
            if !discovering { discovery.ours = false }
            if !discovering && discovery.wanted && adapterReady && discoveryNeeded() && !discovery.starting {
                logger.info("discovery stopped behind our back: restarting it")
                discovery.retryAt = now.advanced(by: .seconds(1))
            }
        }
    }

    /// Whether advertisements are listened to: a device has `connection: advertisement`, or
    /// `bluetooth.advertisements` is `decodable`.
    var listensToAdvertisements: Bool {
        config.bluetooth.advertisements == .decodable
            || config.devices.contains { if case .advertisement = $0.connection { true } else { false } }
    }

    /// Whether a decoder understands what the device advertises (without a bindkey).
    static func decodable(_ dev: BlueZDevice) -> Bool {
        guard !(dev.serviceData.isEmpty && dev.manufacturerData.isEmpty) else { return false }
        let frame = AdvertisementFrame(address: dev.address, serviceData: dev.serviceData, manufacturerData: dev.manufacturerData)
        if case .success? = AdvertisementDecoder.decode(frame, bindkey: nil) { return true }
        return false
    }

    var watchdogPeriod: Duration { config.bluetooth.scanWatchdog ?? .seconds(60) }

    // MARK: Discovery

    /// Whether a wanted peripheral is missing (SPEC §5): with a service filter or a name
    /// pattern every new advertiser may be wanted, so the scan keeps running; when every wanted
    /// peripheral is named by address and connected, it stops.
    func discoveryNeeded() -> Bool {
        // With an active monitor, advertisement devices need no scan.
        let passive = discovery.monitor == .active
        if !config.bluetooth.services.isEmpty || (listensToAdvertisements && !passive) { return true }
        var addresses = known.addresses
        for d in config.devices {
            if passive, case .advertisement = d.connection { continue }
            switch d.match {
            case .name: return true
            case .address(let a): addresses.insert(a.description)
            }
        }
        let online = Set(ctx.registry.all.filter(\.available).map(\.address.description))
        return !addresses.isSubset(of: online)
    }

    func ensureDiscovery(_ group: inout DiscardingTaskGroup) {
        guard adapterReady, discovery.wanted, !discovery.starting, !stopping, discovery.heldFor.isEmpty,
              discoveryNeeded()
        else { return }
        let discovering = central.withTree { $0.properties(path: adapterPath, interface: BlueZ.adapter)?["Discovering"]?.bool } == true
        if discovering && discovery.ours { return }
        discovery.starting = true
        // A UUID filter hides peripherals that `devices` entries match by name or address.
        // Advertisers (SPEC §7) need every advertisement of every device: no UUID filter, and
        // BlueZ's duplicate filter off (`DuplicateData: true`).
        let advertisements = listensToAdvertisements
        let uuids = config.devices.isEmpty && !advertisements ? config.bluetooth.services.map(\.uuidString) : []
        let central = self.central, adapter = adapterPath, mailbox = self.mailbox, logger = self.logger
        group.addTask {
            do throws(BlueZError) {
                try await central.setDiscoveryFilter(adapter: adapter, uuids: uuids, duplicateData: advertisements)
            } catch {
                logger.warning("SetDiscoveryFilter failed: \(error)")
            }
            do throws(BlueZError) {
                try await central.startDiscovery(adapter: adapter)
                mailbox.send(.discoveryFinished(error: nil))
            } catch {
                mailbox.send(.discoveryFinished(error: error))
            }
        }
    }

    /// A stored peripheral's first connection attempt returned (or its head start is over, with
    /// `path` nil): the scan may start once none is left.
    func storedConnectReturned(_ path: String?, _ group: inout DiscardingTaskGroup) {
        guard !discovery.heldFor.isEmpty else { return }
        if let path {
            guard discovery.heldFor.remove(path) != nil else { return }
        } else {
            logger.info("stored peripherals not connected within \(DiscoveryState.storedHeadStart): scanning")
            discovery.heldFor.removeAll()
        }
        guard discovery.heldFor.isEmpty else { return }
        discovery.heldUntil = nil
        ensureDiscovery(&group)
    }

    func discoveryFinished(_ error: BlueZError?, _ group: inout DiscardingTaskGroup) {
        discovery.starting = false
        let discovering = central.withTree { $0.properties(path: adapterPath, interface: BlueZ.adapter)?["Discovering"]?.bool } == true
        guard let error else {
            discovery.ours = true
            // The watchdog measures the silence of this scan, not the time since the last one.
            discovery.lastAdvertisement = now
            let filter = config.devices.isEmpty && !config.bluetooth.services.isEmpty && !listensToAdvertisements
            logger.info(
                "scanning on \(config.bluetooth.adapter) for \(filter ? "services " + config.bluetooth.services.map(\.shortForm).joined(separator: ", ") : "all LE peripherals")")
            return
        }
        if error.code == .inProgress && discovering {
            // Our own session is still running (its Discovering=false came late): keep it.
            discovery.ours = true
            logger.debug("StartDiscovery: InProgress while discovering; keeping the running scan")
        } else if error.code == .inProgress {
            logger.notice("StartDiscovery: InProgress; stopping the scan and retrying")
            let central = self.central, adapter = adapterPath
            group.addTask { try? await central.stopDiscovery(adapter: adapter) }
            discovery.retryAt = now.advanced(by: .seconds(1))
        } else {
            logger.warning("StartDiscovery failed: \(error); retrying in 5 s")
            discovery.retryAt = now.advanced(by: .seconds(5))
        }
    }

    /// Starts or stops the scan as ``discoveryNeeded()`` says.
    func updateDiscovery(_ group: inout DiscardingTaskGroup) {
        guard adapterReady, discovery.wanted, !stopping else { return }
        if discoveryNeeded() {
            ensureDiscovery(&group)
        } else if discovery.ours {
            logger.info(
                discovery.monitor == .active
                    ? "no peripheral is missing (broadcast sensors are monitored passively): stopping the scan"
                    : "every wanted peripheral is connected: stopping the scan")
            discovery.ours = false
            let central = self.central, adapter = adapterPath, logger = self.logger
            group.addTask {
                do throws(BlueZError) { try await central.stopDiscovery(adapter: adapter) } catch {
                    logger.debug("StopDiscovery: \(error)")
                }
            }
        }
    }

    /// Restarts a scan that has seen nothing for a long time while peripherals are missing.
    func scanWatchdog(_ group: inout DiscardingTaskGroup) {
        let period = watchdogPeriod
        discovery.watchdogAt = now.advanced(by: period / 4)
        guard adapterReady, discovery.wanted, discovery.ours, !discovery.starting, discoveryNeeded() else { return }
        // Missing: a managed device that is not online, or a wanted address (configured or stored)
        // that is not online, e.g. one BlueZ dropped from its tree, which only the scan finds again.
        var wanted = known.addresses
        for d in config.devices { if case .address(let a) = d.match { wanted.insert(a.description) } }
        let entries = ctx.registry.all
        let online = Set(entries.filter(\.available).map(\.address.description))
        let missing = entries.isEmpty || entries.contains { !$0.available } || !wanted.isSubset(of: online)
        let last = max(discovery.lastAdvertisement, ctx.advertisements.lastAdvertisement ?? discovery.lastAdvertisement)
        guard missing, last.duration(to: now) > period else { return }
        logger.warning("scan watchdog: no advertisement for \(period) while peripherals are missing; restarting the scan")
        discovery.lastAdvertisement = now
        discovery.ours = false
        discovery.starting = true
        let central = self.central, adapter = adapterPath, mailbox = self.mailbox
        group.addTask {
            try? await central.stopDiscovery(adapter: adapter)
            do throws(BlueZError) {
                try await central.startDiscovery(adapter: adapter)
                mailbox.send(.discoveryFinished(error: nil))
            } catch {
                mailbox.send(.discoveryFinished(error: error))
            }
        }
    }
}
