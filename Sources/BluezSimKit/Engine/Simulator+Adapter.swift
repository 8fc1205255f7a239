import BridgeBase
import DBusKit

/// `org.bluez.Adapter1`: power, discovery sessions and filters, advertisements, device removal.
extension Simulator {
    func adapter(_ path: String) throws(DBusError) -> SimulatedAdapter {
        guard let a = adapters[path], a.present else { throw DBusError(DBusError.Name.unknownObject, "No such adapter \(path)") }
        return a
    }

    // MARK: - Discovery

    func startDiscovery(adapter path: String, sender: String) throws(DBusError) {
        let a = try adapter(path)
        guard a.powered else { throw BluezError.notReady }
        guard !a.discoveryClients.contains(sender) else { throw BluezError.busy }
        if let fault = startDiscoveryFault {
            startDiscoveryFault = nil
            discoveryStartFailures &+= 1
            logger.info("StartDiscovery fails (injected)", metadata: ["adapter": "\(path)", "error": "\(fault)"])
            throw fault
        }
        a.discoveryClients.insert(sender)
        a.discoveryStarts &+= 1
        logger.debug("StartDiscovery", metadata: ["adapter": "\(path)", "client": "\(sender)"])
        if a.discoveryClients.count == 1 { beginDiscovery(a) }
    }

    func stopDiscovery(adapter path: String, sender: String) throws(DBusError) {
        let a = try adapter(path)
        guard a.powered else { throw BluezError.notReady }
        guard a.discoveryClients.remove(sender) != nil else { throw BluezError.failed("No discovery started") }
        // The session (and the filter that came with it) ends here, as in bluetoothd.
        a.filters[sender] = nil
        logger.debug("StopDiscovery", metadata: ["adapter": "\(path)", "client": "\(sender)"])
        // BlueZ 5.66 signals Discovering: false twice after StopDiscovery.
        if a.discoveryClients.isEmpty { endDiscovery(a, signals: 2) }
    }

    func setDiscoveryFilter(adapter path: String, sender: String, filter: [String: DBusValue]) throws(DBusError) {
        let a = try adapter(path)
        let parsed = try DiscoveryFilter.parse(filter)
        a.filters[sender] = parsed
        logger.debug("SetDiscoveryFilter", metadata: [
            "adapter": "\(path)", "client": "\(sender)", "uuids": "\(parsed?.uuids ?? [])",
        ])
    }

    func beginDiscovery(_ a: SimulatedAdapter) {
        a.discoveryGeneration &+= 1
        a.discovering = true
        let generation = a.discoveryGeneration
        if a.stallNextDiscovery {
            a.stallNextDiscovery = false
            a.stalledGeneration = generation
        }
        let start = clock.now
        for d in devices(of: a) {
            d.nextAdvertisement = start + firstAdvertisementDelay(d)
        }
        let path = a.path
        Task { [weak self] in
            await self?.runDiscovery(adapter: path, generation: generation)
        }
    }

    func firstAdvertisementDelay(_ d: SimulatedDevice) -> Duration {
        let base = d.spec.advertiseDelay ?? settings.advertiseDelay
        let jitterNs = DurationText.nanoseconds(settings.advertiseJitter)
        let extra = jitterNs == 0 ? 0 : d.random.next() % (jitterNs + 1)
        return base + .nanoseconds(Int64(extra))
    }

    func endDiscovery(_ a: SimulatedAdapter, signals: Int = 1) {
        guard a.discovering else { return }
        a.discoveryGeneration &+= 1
        a.discovering = false
        for d in devices(of: a) {
            d.nextAdvertisement = nil
            if d.exported && d.hasRSSIProperty {
                d.hasRSSIProperty = false
                var names = ["RSSI"]
                if d.spec.txPower != nil { names.append("TxPower") }
                server.invalidateProperties(path: d.path, interface: BlueZNames.device, names)
            }
        }
        for _ in 0..<max(signals, 1) {
            server.setProperties(path: a.path, interface: BlueZNames.adapter, ["Discovering": .bool(false)])
        }
    }

    /// The discovery loop of one adapter: reports advertisements of in-range peripherals when due.
    func runDiscovery(adapter path: String, generation: UInt64) async {
        // bluetoothd replies to StartDiscovery first; Discovering follows once the controller scans.
        await sleep(.milliseconds(2))
        guard let a = adapters[path], a.discoveryGeneration == generation else { return }
        server.setProperties(path: a.path, interface: BlueZNames.adapter, ["Discovering": .bool(true)])
        while let a = adapters[path], a.discoveryGeneration == generation {
            let now = clock.now
            var wake = now + .seconds(1)
            let stalled = a.stalledGeneration == generation
            for d in devices(of: a) {
                // Peripherals keep advertising while connected (BlueZ peripherals and btvirt do),
                // unless the scenario says otherwise (`advertise_while_connected: false`).
                guard d.inRange, !stalled, advertises(d) else { continue }
                let due = d.nextAdvertisement ?? (now + firstAdvertisementDelay(d))
                if due <= now {
                    advertisement(d, adapter: a)
                    // A device with its own interval (broadcast, replay) advertises at that pace (catching up at most
                    // one interval behind, so a busy machine does not make it burst).
                    if let interval = d.ownAdvertisingInterval {
                        let next = due + interval
                        d.nextAdvertisement = next < now - interval ? now : next
                    } else {
                        d.nextAdvertisement = now + settings.rssiInterval
                    }
                } else {
                    d.nextAdvertisement = due
                }
                wake = min(wake, d.nextAdvertisement!)
            }
            try? await Task.sleep(until: wake, clock: clock)
        }
    }

    /// The peripheral of `d` advertises now: always, or (`advertise_while_connected: false`) while
    /// no adapter of any simulator sharing the link directory has a link to it.
    func advertises(_ d: SimulatedDevice) -> Bool {
        !d.retired && (d.advertiseWhileConnected || !links.isLinked(d.spec.address))
    }

    /// One advertisement of `d` received by `a`: creates the device object or updates its RSSI.
    /// `passive`: seen by an advertisement monitor, not a discovery session (no filter applies).
    /// `replayed`: the frame of a replaying peripheral the caller already moved to; nil: this call moves it.
    func advertisement(_ d: SimulatedDevice, adapter a: SimulatedAdapter, passive: Bool = false,
                       replayed: ReplayFrame? = nil) {
        // A replaying peripheral sends its next captured frame, whether this adapter's filter lets it through or not.
        let replayed = replayed ?? (d.spec.replay.isEmpty ? nil : nextReplayFrame(d, duplicateData: a.duplicateData))
        let rssi = d.nextRSSI()
        guard passive || a.accepts(d.advertisedSpec, rssi: rssi) else { return }
        d.lastSeen = clock.now
        if let frame = replayed { logReplayed(frame, of: d) }
        if !d.exported {
            if let name = d.advertisedName { d.currentName = name }
            advertisementReports &+= 1
            exportDevice(d, rssi: rssi)
            logger.info("device found", metadata: ["address": "\(d.spec.address)", "name": "\(d.advertisedName ?? "")"])
            return
        }
        let previous = server.property(path: d.path, interface: BlueZNames.device, name: "RSSI")
        var changes: [String: DBusValue] = [:]
        // A fixed RSSI (127, "not available", as btvirt reports) is signalled again with every
        // advertisement, as BlueZ 5.66 did in the realbluez VM; a changing one when it changes.
        if previous != .int16(rssi) || d.meanRSSI == 127 { changes["RSSI"] = .int16(rssi) }
        // An advertising report sets Name/Alias back to the advertised name (after the GAP name).
        if let name = d.advertisedName, d.currentName != name {
            d.currentName = name
            changes["Name"] = .string(name)
            changes["Alias"] = .string(name)
        }
        if !d.hasRSSIProperty, let tx = d.spec.txPower { changes["TxPower"] = .int16(tx) }
        var emitted: (uuid: String, bytes: [UInt8])?
        if let broadcast = d.spec.broadcast {
            // Each advertisement is a new packet: BlueZ signals the new ServiceData with its RSSI.
            d.broadcastCount &+= 1
            let frame = BroadcastFrames.frame(broadcast, packet: d.broadcastCount, address: d.spec.address)
            d.serviceData[frame.uuid] = frame.bytes
            changes["ServiceData"] = Self.serviceDataValue(d.serviceData)
            changes["RSSI"] = .int16(rssi)
            emitted = frame
        }
        if let frame = replayed {
            // BlueZ signals the data of the report with its RSSI (DuplicateData: also when unchanged).
            if !frame.serviceData.isEmpty { changes["ServiceData"] = Self.serviceDataValue(d.serviceData) }
            if !frame.manufacturerData.isEmpty {
                changes["ManufacturerData"] = Self.manufacturerDataValue(d.manufacturerData)
            }
            if !frame.uuids.isEmpty {
                let uuids = DBusValue.stringArray(d.uuids)
                if server.property(path: d.path, interface: BlueZNames.device, name: "UUIDs") != uuids {
                    changes["UUIDs"] = uuids
                }
            }
            changes["RSSI"] = .int16(rssi)
        }
        d.hasRSSIProperty = true
        // Timestamped as the signal goes out (before, not after: the bridge may have published the
        // frame by then); scripts/bench-advertisements matches the advertisements to these lines.
        let stamp = emitted != nil && options.logBroadcasts ? EventLog.unixTimeNanoseconds() : nil
        if !changes.isEmpty {
            advertisementReports &+= 1
            server.setProperties(path: d.path, interface: BlueZNames.device, changes)
        }
        if let frame = emitted, let stamp, let log = notifyLog {
            log.append(prefix: Array("\(d.spec.address) \(frame.uuid) ".utf8), bytes: frame.bytes, time: stamp)
        }
    }

    /// Moves a replaying peripheral to its next captured frame (after the last: the first again);
    /// `duplicateData`: as a discovery with `DuplicateData` reports it (``SimulatedDevice/applyReplayFrame(_:duplicateData:)``).
    func nextReplayFrame(_ d: SimulatedDevice, duplicateData: Bool) -> ReplayFrame {
        let next = d.replayIndex + 1 < d.spec.replay.count ? d.replayIndex + 1 : 0
        d.applyReplayFrame(next, duplicateData: duplicateData)
        return d.spec.replay[next]
    }

    /// With `--log-broadcasts`: each entry of a replayed frame a client hears, to the notify log
    /// (`<unix_ns> <address> <service data uuid | 0x + company id> <hex>`).
    func logReplayed(_ frame: ReplayFrame, of d: SimulatedDevice) {
        guard options.logBroadcasts, let log = notifyLog else { return }
        let stamp = EventLog.unixTimeNanoseconds()
        for (uuid, bytes) in frame.serviceData.sorted(by: { $0.key < $1.key }) {
            log.append(prefix: Array("\(d.spec.address) \(uuid) ".utf8), bytes: bytes, time: stamp)
        }
        for (company, bytes) in frame.manufacturerData.sorted(by: { $0.key < $1.key }) {
            log.append(prefix: Array("\(d.spec.address) \(Self.companyText(company)) ".utf8), bytes: bytes, time: stamp)
        }
    }

    /// A company id as the notify log writes it: `0x` and four lowercase hex digits.
    static func companyText(_ company: UInt16) -> String {
        let hex = String(company, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// Removes temporary (never connected) devices unseen for `temporaryTimeout` on adapters that
    /// do not discover, and the objects of retired private addresses (scenario `irk`) unseen that long
    /// whether or not their adapter discovers.
    func sweepTemporaryDevices() {
        let now = clock.now
        for path in deviceOrder {
            guard let d = devices[path], d.exported, d.temporary, d.connection == .disconnected else { continue }
            guard let a = adapters[d.adapterPath], a.present, !a.discovering || d.retired else { continue }
            let seen = d.lastSeen ?? now
            if d.lastSeen == nil { d.lastSeen = now }
            if now - seen >= settings.temporaryTimeout {
                logger.debug("temporary device removed", metadata: ["path": "\(d.path)"])
                unexportDevice(d)
                forgetRetired(d)
            }
        }
    }

    // MARK: - Power

    func applyPowered(adapter path: String, _ on: Bool) {
        guard let a = adapters[path], a.present, a.powered != on else { return }
        a.powered = on
        logger.info("adapter power", metadata: ["adapter": "\(path)", "powered": "\(on)"])
        guard !on else { return }
        a.discoveryClients.removeAll()
        a.filters.removeAll()
        endDiscovery(a)
        for d in devices(of: a) where d.connection != .disconnected {
            linkLost(d)
        }
    }

    // MARK: - Devices

    func removeDevice(adapter path: String, device: String) throws(DBusError) {
        let a = try adapter(path)
        guard let d = devices[device], d.exported, d.adapterPath == a.path else { throw BluezError.doesNotExist }
        if d.connection != .disconnected { linkLost(d, requested: true) }
        unexportDevice(d)
    }

    /// Removes the device object and its GATT objects, and what bluetoothd stores about it
    /// (``hideDevice(_:)`` keeps that); the peripheral stays in the scenario.
    func unexportDevice(_ d: SimulatedDevice) {
        hideDevice(d)
        d.temporary = true
        d.paired = false
        d.bondAuthenticated = false
        d.pendingPaired = false
        d.peripheralForgotBond = false
        d.servicesKnown = false
        persistKnownDevices()
    }

    func connectDevice(adapter path: String, properties: [String: DBusValue]) async throws(DBusError) -> String {
        let a = try adapter(path)
        guard a.powered else { throw BluezError.notReady }
        var address: String?
        var addressType: String?
        for (key, raw) in properties {
            guard case .string(let s) = raw.unwrapped else { throw BluezError.invalidArguments }
            switch key {
            case "Address":
                let parts = s.split(separator: ":", omittingEmptySubsequences: false)
                guard parts.count == 6, parts.allSatisfy({ $0.count == 2 && UInt8($0, radix: 16) != nil }) else {
                    throw BluezError.invalidArguments
                }
                address = s.uppercased()
            case "AddressType":
                guard s == "public" || s == "random" else { throw BluezError.invalidArguments }
                addressType = s
            default:
                throw BluezError.invalidArguments
            }
        }
        guard let address, address != "00:00:00:00:00:00" else { throw BluezError.invalidArguments }
        let target = devices(of: a).first { $0.spec.address == address }
        if let target, target.exported { throw BluezError.alreadyExists }
        // Without AddressType BlueZ pages over BR/EDR: every simulated peripheral is LE-only.
        guard let target, let addressType, target.spec.addressType == addressType else {
            await sleep(settings.connectTimeout)
            throw DBusError("org.bluez.Failed", "")
        }
        return try await establishLink(target, viaConnectDevice: true)
    }
}
