import BridgeCore

/// This bridge's part of a cluster (SPEC §10), decided with the rest: with `cluster.enabled` the core steps its
/// ``ClusterCore`` itself (the cluster topics, what the radios hear of the wanted devices, the links, the free slots,
/// the time) and a wanted device gets a session only while the cluster lets this bridge serve it. Every wanted
/// device found is wanted by the cluster once, so that this bridge's sightings carry it; the cluster is stepped once
/// at the end of the input that wanted it. What it decides (claims, sightings, the command roles, which trackers
/// this bridge publishes) comes out as actions; a device it hands this bridge is served in the same step, or, when
/// the input's tree lacks the device's objects, at an immediate tick that reads them (``pathsNeeded(at:)``).
extension SupervisorCore {
    /// What a served advertisement device's last advertisement was, for the cluster's sightings (advertisements of
    /// advertisement devices take the values' path and never reach the supervisor).
    package struct Advertiser: Sendable, Equatable {
        /// When the advertisement router last saw it.
        package var last: Instant
        /// Its RSSI then.
        package var rssi: Int

        /// A reading.
        package init(last: Instant, rssi: Int) {
            self.last = last
            self.rssi = rssi
        }
    }

    /// How a device with this policy is served in a cluster.
    package static func clusterService(_ policy: ConnectionPolicy) -> ClusterService {
        if case .advertisement = policy { return .listen }
        return .link
    }

    /// Whether the device may have a session now; wants it the first time (the cluster is stepped at the end of the
    /// input).
    package mutating func clusterAdmits(
        segment: String, address: BluetoothAddress, policy: ConnectionPolicy, _ out: inout [Action]
    ) -> Bool {
        guard cluster != nil else { return true }
        if cluster?.ownership.isServing(segment) == true { return true }
        if let line = cluster?.want(segment, address: address, service: Self.clusterService(policy)) {
            out.append(action(line))
        }
        return false
    }

    /// At start: the devices the configuration names by address and the stored peripherals are wanted at once (the
    /// others when found).
    package mutating func clusterWantKnown(_ out: inout [Action]) {
        guard cluster != nil else { return }
        for device in config.devices {
            guard case .address(let address) = device.match else { continue }
            let segment = topics.deviceSegment(address: address, config: device)
            _ = clusterAdmits(segment: segment, address: address, policy: device.connection, &out)
        }
        for p in stored {
            guard let address = BluetoothAddress(p.address) else { continue }
            let deviceConfig = config.device(address: address, name: nil)
            let segment = topics.deviceSegment(address: address, config: deviceConfig)
            _ = clusterAdmits(segment: segment, address: address, policy: deviceConfig?.connection ?? .always, &out)
        }
    }

    /// Whether the cluster lets this bridge serve the device at this address (rule 6 for stored peripherals).
    package func clusterServes(address: String) -> Bool {
        guard let cluster else { return true }
        return cluster.ownership.wanted.keys.contains { segment in
            cluster.address(of: segment)?.description == address && cluster.ownership.isServing(segment)
                && !cluster.trackers.contains(segment)
        }
    }

    /// Whether an RSSI report of the device at `path` is a reading the cluster wants (a wanted device's).
    package func clusterHears(path: String) -> Bool {
        guard let cluster, let address = BluetoothAddress(BlueZNames.address(fromDevicePath: path)) else { return false }
        return cluster.wants(address: address)
    }

    /// The device objects of served devices that wait for them (one per adapter the core knows).
    package var clusterPathsNeeded: [String] {
        guard let cluster else { return [] }
        return servedAwaitingObjects.sorted().compactMap { cluster.address(of: $0) }.flatMap { address in
            knownAdapters.map { BlueZNames.devicePath(adapterName: $0, address: address.description) }
        }
    }

    // MARK: Stepping the cluster

    /// Feeds one event to the cluster and performs what it decided: publishing, serving, stopping, the presence's
    /// views; then the command roles and the trackers this bridge publishes, when they changed.
    package mutating func clusterStep(
        _ event: ClusterCore<Instant>.Event, now: Instant, unixTime: Int64, tree: Tree, _ out: inout [Action]
    ) {
        guard let decided = cluster?.handle(event, now: now, unixTime: unixTime), let trackers = cluster?.trackers
        else { return }
        for action in decided {
            switch action {
            case .publish(let topic, let payload):
                out.append(.publishRetained(topic: topic, payload: payload))
            case .serve(let segment, _):
                // A tracker is published, not served: see ``trackerOwnership(now:_:)``.
                if !trackers.contains(segment) { serve(segment, now: now, tree: tree, &out) }
            case .stopServing(let segment):
                if !trackers.contains(segment) { stopServing(segment, &out) }
            case .log(let level, let message):
                out.append(.log(level, message))
            case .trackerSightings(let bridge, let heard):
                out.append(.trackerSightings(bridge: bridge, heard))
            case .bridgeGone(let bridge):
                out.append(.bridgeGone(bridge: bridge))
            }
        }
        switch event {
        case .heard, .freeSlots: break  // no owner or bridge state changes
        default: commandRoles(&out)
        }
        trackerOwnership(now: now, &out)
    }

    /// The broker took the connection: the cluster starts afresh and its topics are subscribed again (their
    /// retained messages come after this point).
    package mutating func clusterBrokerConnected(now: Instant, unixTime: Int64, tree: Tree, _ out: inout [Action]) {
        guard cluster != nil else { return }
        clusterStep(.brokerConnected, now: now, unixTime: unixTime, tree: tree, &out)
        out.append(.subscribeClusterTopics)
        clusterStep(.freeSlots(freeSlots(tree)), now: now, unixTime: unixTime, tree: tree, &out)
    }

    /// A session's link came up or went down (or the session ended).
    package mutating func clusterLink(_ path: String, up: Bool, now: Instant, unixTime: Int64, tree: Tree, _ out: inout [Action]) {
        guard cluster != nil, let record = devices[path] else { return }
        if !up { advertisersHeard[path] = nil }
        let adapter = up ? BlueZNames.adapterName(of: path) : nil
        clusterStep(.link(segment: record.segment, address: record.address, adapter: adapter), now: now, unixTime: unixTime, tree: tree, &out)
        clusterStep(.freeSlots(freeSlots(tree)), now: now, unixTime: unixTime, tree: tree, &out)
    }

    /// A wanted device's RSSI as an adapter heard it (its snapshot is in the tree).
    package mutating func clusterHeard(_ path: String, now: Instant, unixTime: Int64, tree: Tree, _ out: inout [Action]) {
        guard let cluster, let seen = tree.devices[path], let rssi = seen.rssi, cluster.wants(address: seen.address)
        else { return }
        clusterStep(
            .heard(address: seen.address, adapter: BlueZNames.adapterName(of: path), rssi: rssi), now: now, unixTime: unixTime,
            tree: tree, &out)
    }

    /// The cluster's timer: the free slots and what the served advertisement devices were heard at, then a tick.
    package mutating func clusterTick(
        advertisers: [String: Advertiser], now: Instant, unixTime: Int64, tree: Tree, _ out: inout [Action]
    ) {
        clusterStep(.freeSlots(freeSlots(tree)), now: now, unixTime: unixTime, tree: tree, &out)
        for (path, record) in devices.sorted(by: { $0.key < $1.key }) {
            guard case .advertisement = record.policy, let heard = advertisers[path],
                  advertisersHeard[path].map({ heard.last > $0 }) ?? true
            else { continue }
            advertisersHeard[path] = heard.last
            clusterStep(
                .heard(address: record.address, adapter: BlueZNames.adapterName(of: path), rssi: heard.rssi), now: now,
                unixTime: unixTime, tree: tree, &out)
        }
        clusterStep(.tick, now: now, unixTime: unixTime, tree: tree, &out)
    }

    /// The cluster gives the device to this bridge: its session starts (with the device object BlueZ has; a stored
    /// peripheral BlueZ no longer has is connected with `ConnectDevice`; else the scan finds it). The device's
    /// objects not in this input's tree: read at once (an immediate tick, ``clusterPathsNeeded``).
    package mutating func serve(
        _ segment: String, now: Instant, tree: Tree, objectsRead: Bool = false, _ out: inout [Action]
    ) {
        guard let address = cluster?.address(of: segment)?.description else { return }
        servedAwaitingObjects.remove(segment)
        guard sessionOf[address] == nil else { return }
        if let first = objects(of: address, tree: tree).first {
            consider(first.path, connectNow: isStored(address), now: now, tree: tree, &out)
        } else if !objectsRead {
            // This input's tree need not hold the device's objects: read them, at once.
            servedAwaitingObjects.insert(segment)
        } else if isStored(address) {
            connectStored(only: address, now: now, tree: tree, &out)
        } else {
            out.append(.log(.info, "\(segment) is ours; waiting for the scan to find \(address)"))
        }
    }

    /// The served devices whose objects were read for this tick: served now.
    package mutating func serveAwaiting(now: Instant, tree: Tree, _ out: inout [Action]) {
        for segment in servedAwaitingObjects.sorted() where cluster?.ownership.isServing(segment) == true {
            serve(segment, now: now, tree: tree, objectsRead: true, &out)
        }
        servedAwaitingObjects.removeAll()
    }

    /// The cluster takes the device from this bridge: its session stops (disconnecting).
    package mutating func stopServing(_ segment: String, _ out: inout [Action]) {
        servedAwaitingObjects.remove(segment)
        for record in devices.values.sorted(by: { $0.path < $1.path }) where record.segment == segment {
            out.append(.send(path: record.path, .stop))
        }
    }

    /// Hands command intake the roles when they changed.
    private mutating func commandRoles(_ out: inout [Action]) {
        guard let roles = cluster?.roles, roles != lastRoles else { return }
        lastRoles = roles
        out.append(.commandRoles(roles))
    }

    /// Which trackers this bridge publishes (SPEC §10 rule 5, §12): those it owns, and, once settled on the broker,
    /// those nobody owns when it is the online bridge whose id sorts first (as for commands): so that `not_home` is
    /// published when no bridge hears a tracker any more (its owner released it after 60 s). Home Assistant's config
    /// of a tracker follows: its `via_device` is the publishing bridge.
    private mutating func trackerOwnership(now: Instant, _ out: inout [Action]) {
        guard let cluster, !config.trackers.isEmpty else { return }
        let settled = cluster.ownership.isSettled(now: now)
        for tracker in config.trackers {
            let role = cluster.commandRole(for: tracker.name)
            let owned = role == .execute || (role == .answerNotConnected && settled)
            guard trackersOwned[tracker.name] != owned else { continue }
            trackersOwned[tracker.name] = owned
            out.append(.log(
                .debug,
                "cluster: tracker \(tracker.name) is \(owned ? "published here" : "published by \(cluster.owner(of: tracker.name) ?? "nobody")")"))
            out.append(.trackerOwnership(tracker: tracker.name, owned: owned))
        }
    }

    /// A cluster log line as the supervisor's action.
    private func action(_ line: ClusterCore<Instant>.Action) -> Action {
        if case .log(let level, let message) = line { return .log(level, message) }
        return .log(.debug, "\(line)")
    }
}
