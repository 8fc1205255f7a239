import BridgeCore

extension SessionCore {
    /// Services BlueZ lists in `UUIDs` but exports no object for: GAP (bluetoothd's own) and HID
    /// 1812 (claimed by its HoG plugin).
    package static var unexportedServices: Set<BluetoothUUID> { [BluetoothUUID(uuid16: 0x1800), BluetoothUUID(uuid16: 0x1812)] }

    /// Decides whether a resolved device's GATT objects are complete: `ServicesResolved` is true,
    /// every service in `UUIDs` (but those BlueZ keeps to itself) has its object (or the grace
    /// period passed), and no object appeared for the quiet period. Objects that appear after the
    /// device was set up are mapped and set up on their own.
    package mutating func checkGatt(_ s: inout Step) {
        guard let view = s.view, view.servicesResolved, machine.isConnected else { return }
        if let last = gatt.lastChangeAt, last.duration(to: s.now) < timing.gattQuietPeriod {
            gatt.checkAt = last.advanced(by: timing.gattQuietPeriod)
            return
        }
        guard !view.services.isEmpty else { return }
        let exported = Set(view.services.map(\.uuid))
        let missing = view.uuids.filter { !Self.unexportedServices.contains($0) && !exported.contains($0) }
        if !missing.isEmpty && !gatt.reportedMissingServices {
            let waited = gatt.resolvedAt.map { $0.duration(to: s.now) } ?? timing.missingServicesGrace
            if waited < timing.missingServicesGrace {
                gatt.checkAt = (gatt.resolvedAt ?? s.now).advanced(by: timing.missingServicesGrace)
                return
            }
            gatt.reportedMissingServices = true
            s.log(.notice,
                "\(device.address): no GATT objects for \(missing.map(\.shortForm).joined(separator: ", ")) \(waited) after ServicesResolved; going on without them")
        }
        if !machine.gattObjectsPresent {
            feed(.gattObjectsPresent, &s)
        } else if machine.isReady && hasUnmapped(view) {
            let added = mapNew(&s)
            if !added.isEmpty { enqueueSetup(added, onlyNew: true, &s) }
        }
    }

    private func hasUnmapped(_ view: DeviceView) -> Bool {
        let mapped = link?.mappedPaths ?? []
        return view.services.contains { s in s.characteristics.contains { !mapped.contains($0.path) } }
    }

    /// Maps the whole device and queues its setup (the machine's `startSubscribing`).
    package mutating func startSetup(_ s: inout Step) {
        characteristics.removeAll()
        link?.mappedPaths.removeAll()
        link?.setup.subscribeAttempts = 0
        link?.setup.subscribeFailures = 0
        // The last connection dropped with a refusal for lack of pairing: pair before anything else.
        if pairing.onConnect { link?.setup.operations.append(.pair) }
        enqueueSetup(mapNew(&s), onlyNew: false, runsProfile: true, &s)
    }

    /// Maps the characteristics not mapped yet on this link to topics and routes; returns them.
    package mutating func mapNew(_ s: inout Step) -> [MappedCharacteristic] {
        let topics = configuration.topics
        let config = device.config
        var added: [MappedCharacteristic] = []
        var mappedPaths = link?.mappedPaths ?? []
        defer { link?.mappedPaths = mappedPaths }
        for service in s.view?.services ?? [] {
            let serviceUUID = service.uuid
            let serviceSegment = topics.serviceSegment(serviceUUID, config: config)
            for ch in service.characteristics where !mappedPaths.contains(ch.path) {
                mappedPaths.insert(ch.path)
                let uuid = ch.uuid
                // A profile's steps reach the characteristics they name whatever `only_services` says.
                guard GattMapping.shouldMap(service: serviceUUID, characteristic: uuid, device: config)
                    || (device.profile?.characteristics.contains(uuid) ?? false)
                else { continue }
                let segment = topics.characteristicSegment(uuid, config: config)
                let settings = config?.characteristic(uuid)
                let mapped = MappedCharacteristic(
                    path: ch.path, uuid: uuid,
                    key: MappedCharacteristic.Key(service: serviceSegment, characteristic: segment),
                    properties: ch.properties, format: topics.format(of: uuid, config: config),
                    writeTypes: settings?.writeTypes, poll: settings?.poll)
                s.emit(.route(
                    path: ch.path, topic: topics.value(device: device.segment, service: serviceSegment, characteristic: segment),
                    format: mapped.format))
                characteristics[mapped.key] = mapped
                added.append(mapped)
            }
        }
        return added
    }

    /// Queues what a connection needs: notifications (subscribe first), then the reads.
    /// A poll device subscribes only when it listens, and a poll device connected on demand for
    /// commands neither subscribes nor reads. A device with a profile (SPEC §15) subscribes to and reads only the
    /// characteristics its entry names, then runs the profile's connection steps (`runsProfile`: on every
    /// connection, on demand included, and every poll cycle).
    package mutating func enqueueSetup(_ list: [MappedCharacteristic], onlyNew: Bool, runsProfile: Bool = false, _ s: inout Step) {
        var list = list
        if device.profile != nil {
            let named = Set(device.config?.characteristics.map(\.uuid) ?? [])
            list = list.filter { named.contains($0.uuid) }
        }
        var subscribe = true
        var read = true
        if case .poll(_, let listen) = device.policy {
            let inCycle = cycle.isRunning
            subscribe = inCycle && listen > .zero
            read = inCycle
        }
        enqueueDescriptorReads(list, &s)
        var setup = link?.setup ?? SessionLink.Setup()
        if subscribe {
            for mc in list where mc.canNotify {
                setup.operations.append(.subscribe(mc))
                setup.subscribeAttempts += 1
            }
        }
        if read {
            for mc in list where mc.canRead { setup.operations.append(.read(mc, initial: true)) }
        }
        if runsProfile, device.profile != nil { setup.operations.append(.profileSteps) }
        setup.operations.append(.setupDone(onlyNew: onlyNew))
        setup.running = true
        link?.setup = setup
    }

    /// The setup marker was reached: the connection is subscribed (or not).
    package mutating func setupDone(onlyNew: Bool, _ s: inout Step) {
        link?.setup.running = false
        let setup = link?.setup ?? SessionLink.Setup()
        let notifying = link?.notifying.count ?? 0
        let reads = characteristics.values.filter(\.canRead).count
        if onlyNew {
            s.log(.info, "\(device.address): more characteristics appeared; \(notifying) notifying")
        } else {
            s.log(.info,
                "\(device.address): subscribed to \(notifying) characteristics, read \(reads)\(setup.subscribeFailures > 0 ? ", \(setup.subscribeFailures) refused notifications" : "")\(device.profile.map { "; profile \($0.id)" } ?? "")")
        }
        reportMapping(&s)
        if !onlyNew {
            if setup.subscribeAttempts > 0 && setup.subscribeFailures == setup.subscribeAttempts {
                feed(.subscribeFailed, &s)
            } else {
                feed(.subscribed, &s)
                // Objects that appeared while subscribing were not in the snapshot.
                checkGatt(&s)
            }
        }
    }

    /// Tells the supervisor what is mapped (state file, Home Assistant discovery, the registry's
    /// service list).
    package mutating func reportMapping(_ s: inout Step) {
        var map: [String: String] = [:]
        var discovery: [HomeAssistantDiscovery.Characteristic] = []
        let services = s.view?.services.map(\.uuid) ?? []
        for mc in characteristics.values.sorted(by: { $0.path < $1.path }) {
            map[mc.key.service + "/" + mc.key.characteristic] = mc.uuid.uuidString
            guard configuration.homeAssistantDiscovery else { continue }
            let entry = device.config?.characteristics.first { $0.uuid == mc.uuid }
            let canWrite = mc.writeTypes.map { !$0.isEmpty }
                ?? (mc.properties.canWriteWithResponse || mc.properties.canWriteWithoutResponse)
            guard mc.canNotify || mc.canRead || canWrite else { continue }
            discovery.append(HomeAssistantDiscovery.Characteristic(
                service: mc.key.service, characteristic: mc.key.characteristic, uuid: mc.uuid, format: mc.format,
                canNotify: mc.canNotify, canRead: mc.canRead, canWrite: canWrite, configured: entry != nil,
                press: entry?.press, range: entry?.range, presentation: mc.presentation,
                userDescription: mc.userDescription))
        }
        let segments = services
            .filter { GattMapping.listsService($0, device: device.config) }
            .map { configuration.topics.serviceSegment($0, config: device.config) }
        s.emit(.report(.mapped(MappedDevice(
            characteristics: map, services: services.map(\.uuidString), serviceSegments: segments, discovery: discovery,
            name: s.view?.name, information: information, profile: device.profile?.id))))
    }

    /// The device became ready: start the `poll` intervals of its characteristics.
    package mutating func becameReady(_ s: inout Step) {
        for mc in characteristics.values where mc.canRead {
            if let interval = mc.poll { link?.pollDue[mc.path] = s.now.advanced(by: interval) }
        }
    }

    /// Queues the reads whose `poll` interval came.
    package mutating func duePolls(_ s: inout Step) {
        guard machine.isReady else { return }
        for (p, due) in link?.pollDue ?? [:] where due <= s.now {
            guard let mc = characteristics.values.first(where: { $0.path == p }), let interval = mc.poll else {
                link?.pollDue[p] = nil
                continue
            }
            link?.pollDue[p] = s.now.advanced(by: interval)
            let queued = queue.work.contains { if case .read(let m, _) = $0 { return m.path == p } else { return false } }
            if !queued { queue.work.append(.read(mc, initial: false)) }
        }
    }
}
