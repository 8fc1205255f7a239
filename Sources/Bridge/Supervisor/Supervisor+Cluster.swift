import BlueZ
import BridgeCore
import RuntimeCore

/// Executing the cluster's decisions (SPEC §10): the ``ClusterCore`` is fed the cluster topics, what the adapter
/// hears of the wanted devices, the links and the free slots; its actions publish, and start or stop sessions
/// through the supervisor's core (``SupervisorCore/Event/serve(segment:)``). Without a cluster nothing here runs.
extension Supervisor {
    /// Feeds one event to the cluster core and performs its actions.
    func clusterStep(_ event: ClusterCore.Event, _ group: inout DiscardingTaskGroup) {
        guard cluster != nil else { return }
        let actions = cluster?.handle(event, now: now, unixTime: ctx.clock.unixTime) ?? []
        switch event {
        case .heard, .freeSlots: break  // no owner or bridge state changes
        default: updateRoles()
        }
        for action in actions {
            switch action {
            case .publish(let topic, let payload):
                ctx.broker.publish(topic: topic, payload: payload, qos: 1, retain: true)
            case .serve(let segment, _):
                guard cluster?.trackers.contains(segment) != true else { break }  // a tracker: see updateTrackerOwnership()
                // (No path before any adapter is known: served all the same, the adapter's devices come later.)
                feed(.serve(segment: segment), core.clusterPath(segment).map { .paths([$0]) } ?? .noDevices, &group)
            case .stopServing(let segment):
                guard cluster?.trackers.contains(segment) != true else { break }
                feed(.stopServing(segment: segment), .noDevices, &group)
            case .log(let level, let message):
                logger.log(level: level, "\(message)")
            case .trackerSightings(let bridge, let heard):
                ctx.presence?.step(.sightings(bridge: bridge, trackers: heard))
            case .bridgeGone(let bridge):
                ctx.presence?.step(.bridgeGone(bridge: bridge))
            }
        }
        updateTrackerOwnership()
    }

    /// Which trackers this bridge publishes (SPEC §10 rule 5, §12): those it owns, and, once settled on the broker,
    /// those nobody owns when it is the online bridge whose id sorts first (as for commands): so that `not_home` is
    /// published when no bridge hears a tracker any more (its owner released it after 60 s). Home Assistant's config
    /// of a tracker follows: its `via_device` is the publishing bridge.
    func updateTrackerOwnership() {
        guard let cluster, let presence = ctx.presence else { return }
        let settled = cluster.ownership.isSettled(now: now)
        for tracker in config.trackers {
            let role = cluster.commandRole(for: tracker.name)
            let owned = role == .execute || (role == .answerNotConnected && settled)
            guard trackersOwned[tracker.name] != owned else { continue }
            trackersOwned[tracker.name] = owned
            logger.debug("cluster: tracker \(tracker.name) is \(owned ? "published here" : "published by \(cluster.owner(of: tracker.name) ?? "nobody")")")
            presence.step(.ownership(tracker: tracker.name, owned: owned))
            if owned {
                homeAssistant.trackersServedElsewhere.remove(tracker.name)
                if config.homeAssistant.discovery { homeAssistant.publish(tracker: tracker) }
            } else {
                homeAssistant.trackersServedElsewhere.insert(tracker.name)
            }
        }
    }

    /// The broker took the connection: the cluster starts afresh, and the cluster topics are subscribed again so
    /// that their retained messages come after this point (intake's messages and this event travel apart).
    func clusterBrokerConnected(_ group: inout DiscardingTaskGroup) {
        guard cluster != nil, let topics = ctx.topics.cluster else { return }
        clusterStep(.brokerConnected, &group)
        for filter in topics.filters { ctx.broker.subscribe(filter, qos: 1) }
        clusterStep(.freeSlots(freeSlots), &group)
    }

    /// The cluster's timer: the free slots and what the served advertisement devices were heard at, then a tick.
    func clusterTick(_ group: inout DiscardingTaskGroup) {
        clusterStep(.freeSlots(freeSlots), &group)
        // Advertisements of served advertisement devices take the values' path and never reach the supervisor.
        for (path, record) in core.devices {
            guard case .advertisement = record.policy else { continue }
            let seen = ctx.advertisements.seen(path: path)
            guard let last = seen.last, last > (advertisementsHeard[path] ?? BridgeInstant(offset: .zero)),
                  let rssi = ctx.advertisements.rssi(path: path)
            else { continue }
            advertisementsHeard[path] = last
            let adapter = BlueZNames.adapterName(of: path)
            clusterStep(.heard(address: record.address, adapter: adapter, rssi: rssi), &group)
        }
        clusterStep(.tick, &group)
    }

    /// A wanted device's RSSI as the adapter heard it.
    func clusterHeard(_ path: String, _ group: inout DiscardingTaskGroup) {
        guard let cluster, let address = BluetoothAddress(BlueZDevice.address(fromPath: path)),
              cluster.wants(address: address),
              let rssi = central.device(path)?.rssi
        else { return }
        clusterStep(.heard(address: address, adapter: BlueZNames.adapterName(of: path), rssi: rssi), &group)
    }

    /// A session's link came up or went down (or the session ended).
    func clusterLink(_ path: String, up: Bool, _ group: inout DiscardingTaskGroup) {
        guard cluster != nil, let record = core.devices[path] else { return }
        if !up { advertisementsHeard[path] = nil }
        let adapter = up ? BlueZNames.adapterName(of: path) : nil
        clusterStep(.link(segment: record.segment, address: record.address, adapter: adapter), &group)
        clusterStep(.freeSlots(freeSlots), &group)
    }

    /// Free connection slots per adapter.
    var freeSlots: [String: Int] {
        Dictionary(uniqueKeysWithValues: core.readyAdapters.map { ($0, ctx.slots.free(on: $0)) })
    }

    /// Hands intake the command roles when they changed.
    func updateRoles() {
        guard let cluster, let roles = ctx.clusterRoles else { return }
        let snapshot = cluster.roles
        guard snapshot != lastRoles else { return }
        lastRoles = snapshot
        roles.update(snapshot)
    }
}
