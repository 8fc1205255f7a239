import BlueZ
import BridgeCore

extension PeripheralSession {
    /// Services BlueZ lists in `UUIDs` but exports no object for: GAP (bluetoothd's own) and HID
    /// 1812 (claimed by its HoG plugin).
    static let unexportedServices: Set<BluetoothUUID> = [BluetoothUUID(uuid16: 0x1800), BluetoothUUID(uuid16: 0x1812)]

    /// Decides whether a resolved device's GATT objects are complete: `ServicesResolved` is true,
    /// every service in `UUIDs` (but those BlueZ keeps to itself) has its object (or the grace
    /// period passed), and no object appeared for the quiet period. Objects that appear after the
    /// device was set up are mapped and set up on their own.
    func checkGatt(_ group: inout DiscardingTaskGroup) {
        let timing = ctx.timing
        let now = self.now
        let snapshot = ctx.central.withTree { t -> (resolved: Bool, uuids: [BluetoothUUID], services: [GattService], unmapped: Bool)? in
            guard let d = t.device(path) else { return nil }
            let services = t.services(device: path)
            let unmapped = services.contains { s in t.characteristics(service: s.path).contains { !mappedPaths.contains($0.path) } }
            return (d.servicesResolved, d.uuids, services, unmapped)
        }
        guard let snapshot, snapshot.resolved, machine.isConnected else { return }
        if let last = lastGattObjectAt, last.duration(to: now) < timing.gattQuietPeriod {
            gattCheckAt = last.advanced(by: timing.gattQuietPeriod)
            return
        }
        guard !snapshot.services.isEmpty else { return }
        let exported = Set(snapshot.services.map(\.uuid))
        let missing = snapshot.uuids.filter { !Self.unexportedServices.contains($0) && !exported.contains($0) }
        if !missing.isEmpty && !reportedMissingServices {
            let waited = resolvedAt.map { $0.duration(to: now) } ?? timing.missingServicesGrace
            if waited < timing.missingServicesGrace {
                gattCheckAt = (resolvedAt ?? now).advanced(by: timing.missingServicesGrace)
                return
            }
            reportedMissingServices = true
            logger.notice(
                "\(device.address): no GATT objects for \(missing.map(\.shortForm).joined(separator: ", ")) \(waited) after ServicesResolved; going on without them")
        }
        if !machine.gattObjectsPresent {
            feed(.gattObjectsPresent, &group)
        } else if machine.isReady && snapshot.unmapped {
            let added = mapNew()
            if !added.isEmpty { enqueueSetup(added, onlyNew: true) }
        }
    }

    /// Maps the whole device and queues its setup (the machine's `startSubscribing`).
    func startSetup() {
        characteristics.removeAll()
        mappedPaths.removeAll()
        subscribeAttempts = 0
        subscribeFailures = 0
        enqueueSetup(mapNew(), onlyNew: false)
    }

    /// Maps the characteristics not mapped yet in this connection to topics and routes; returns them.
    func mapNew() -> [MappedCharacteristic] {
        let topics = ctx.topics
        let config = device.config
        let list: [(GattService, [GattCharacteristic])] = ctx.central.withTree { t in
            t.services(device: path).map { ($0, t.characteristics(service: $0.path)) }
        }
        var added: [MappedCharacteristic] = []
        for (service, chars) in list {
            let serviceUUID = service.uuid
            let serviceSegment = topics.serviceSegment(serviceUUID, config: config)
            for ch in chars where !mappedPaths.contains(ch.path) {
                mappedPaths.insert(ch.path)
                let uuid = ch.uuid
                guard GattMapping.shouldMap(service: serviceUUID, characteristic: uuid, device: config) else { continue }
                let segment = topics.characteristicSegment(uuid, config: config)
                let settings = config?.characteristic(uuid)
                let mapped = MappedCharacteristic(
                    path: ch.path, uuid: uuid,
                    key: MappedCharacteristic.Key(service: serviceSegment, characteristic: segment),
                    properties: ch.properties, format: topics.format(of: uuid, config: config),
                    writeTypes: settings?.writeTypes, poll: settings?.poll)
                ctx.router.setRoute(
                    path: ch.path, topic: topics.value(device: device.segment, service: serviceSegment, characteristic: segment),
                    format: mapped.format, device: device.segment)
                characteristics[mapped.key] = mapped
                added.append(mapped)
            }
        }
        return added
    }

    /// Queues what a connection needs: notifications (subscribe first), then the reads.
    /// A poll device subscribes only when it listens, and a poll device connected on demand for
    /// commands neither subscribes nor reads.
    func enqueueSetup(_ list: [MappedCharacteristic], onlyNew: Bool) {
        var subscribe = true
        var read = true
        if case .poll(_, let listen) = device.policy {
            let inCycle = cycle.isRunning
            subscribe = inCycle && listen > .zero
            read = inCycle
        }
        if subscribe {
            for mc in list where mc.canNotify {
                setupQueue.append(.subscribe(mc))
                subscribeAttempts += 1
            }
        }
        if read {
            for mc in list where mc.canRead { setupQueue.append(.read(mc, initial: true)) }
        }
        setupQueue.append(.setupDone(onlyNew: onlyNew))
        setupRunning = true
    }

    /// The setup marker was reached: the connection is subscribed (or not).
    func setupDone(onlyNew: Bool, _ group: inout DiscardingTaskGroup) {
        setupRunning = false
        let reads = characteristics.values.filter(\.canRead).count
        if onlyNew {
            logger.info("\(device.address): more characteristics appeared; \(notifying.count) notifying")
        } else {
            logger.info(
                "\(device.address): subscribed to \(notifying.count) characteristics, read \(reads)\(subscribeFailures > 0 ? ", \(subscribeFailures) refused notifications" : "")")
        }
        reportMapping()
        if !onlyNew {
            if subscribeAttempts > 0 && subscribeFailures == subscribeAttempts {
                feed(.subscribeFailed, &group)
            } else {
                feed(.subscribed, &group)
                // Objects that appeared while subscribing were not in the snapshot.
                checkGatt(&group)
            }
        }
    }

    /// Tells the supervisor what is mapped (state file, Home Assistant discovery) and updates the
    /// registry's service list.
    func reportMapping() {
        var map: [String: String] = [:]
        var discovery: [HomeAssistantDiscovery.Characteristic] = []
        let (name, services) = ctx.central.withTree { t in (t.device(path)?.name, t.services(device: path).map(\.uuid)) }
        for mc in characteristics.values.sorted(by: { $0.path < $1.path }) {
            map[mc.key.service + "/" + mc.key.characteristic] = mc.uuid.uuidString
            guard ctx.config.homeAssistant.discovery else { continue }
            let entry = device.config?.characteristics.first { $0.uuid == mc.uuid }
            let canWrite = mc.writeTypes.map { !$0.isEmpty }
                ?? (mc.properties.canWriteWithResponse || mc.properties.canWriteWithoutResponse)
            guard mc.canNotify || mc.canRead || canWrite else { continue }
            discovery.append(HomeAssistantDiscovery.Characteristic(
                service: mc.key.service, characteristic: mc.key.characteristic, uuid: mc.uuid, format: mc.format,
                canNotify: mc.canNotify, canRead: mc.canRead, canWrite: canWrite, configured: entry != nil,
                press: entry?.press, range: entry?.range))
        }
        let segments = services
            .filter { GattMapping.listsService($0, device: device.config) }
            .map { ctx.topics.serviceSegment($0, config: device.config) }
        ctx.registry.update(path: path) { $0.services = segments }
        ctx.supervisor.send(.session(path: path, .mapped(MappedDevice(
            characteristics: map, services: services.map(\.uuidString), serviceSegments: segments, discovery: discovery, name: name, information: information))))
    }

    /// The device became ready: start the `poll` intervals of its characteristics.
    func becameReady() {
        for mc in characteristics.values where mc.canRead {
            if let interval = mc.poll { pollDue[mc.path] = now.advanced(by: interval) }
        }
    }

    /// Queues the reads whose `poll` interval came.
    func duePolls() {
        guard machine.isReady else { return }
        let now = self.now
        for (p, due) in pollDue where due <= now {
            guard let mc = characteristics.values.first(where: { $0.path == p }), let interval = mc.poll else {
                pollDue[p] = nil
                continue
            }
            pollDue[p] = now.advanced(by: interval)
            let queued = workQueue.contains { if case .read(let m, _) = $0 { return m.path == p } else { return false } }
            if !queued { workQueue.append(.read(mc, initial: false)) }
        }
    }

    /// A state without its clock values, for logs.
    static func describe(_ state: Machine.State, now: BridgeInstant) -> String {
        func inSeconds(_ i: BridgeInstant) -> String { i > now ? "in \(now.duration(to: i))" : "due" }
        switch state {
        case .idle: return "idle"
        case .waitingForSlot: return "waiting for a connection slot"
        case .connecting(let d): return "connecting (deadline \(inSeconds(d)))"
        case .resolving(let d): return "resolving services (deadline \(inSeconds(d)))"
        case .subscribing(let d): return "subscribing (deadline \(inSeconds(d)))"
        case .ready: return "ready"
        case .disconnecting(let d): return "waiting for disconnect (deadline \(inSeconds(d)))"
        case .backoff(let until): return "backing off, retry \(inSeconds(until))"
        case .stopped: return "stopped"
        }
    }
}
