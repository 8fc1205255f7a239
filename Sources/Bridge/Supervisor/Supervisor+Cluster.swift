import BlueZ
import BridgeCore

#if canImport(Glibc)
import Glibc
#endif

/// Executing the cluster's decisions (SPEC §10): the ``ClusterCore`` is fed the cluster topics, what the adapter
/// hears of the wanted devices, the links and the free slots; its actions publish, and start or stop sessions
/// through the supervisor's core (``SupervisorCore/Event/serve(segment:)``). Without a cluster nothing here runs.
extension Supervisor {
    /// Feeds one event to the cluster core and performs its actions.
    func clusterStep(_ event: ClusterCore.Event, _ group: inout DiscardingTaskGroup) {
        guard cluster != nil else { return }
        let actions = cluster?.handle(event, now: now, unixTime: Int64(time(nil))) ?? []
        switch event {
        case .heard, .freeSlots: break  // no owner or bridge state changes
        default: updateRoles()
        }
        for action in actions {
            switch action {
            case .publish(let topic, let payload):
                ctx.broker.publish(topic: topic, payload: payload, qos: 1, retain: true)
            case .serve(let segment, _):
                // (No path before any adapter is known: served all the same, the adapter's devices come later.)
                feed(.serve(segment: segment), core.clusterPath(segment).map { .paths([$0]) } ?? .none, &group)
            case .stopServing(let segment):
                feed(.stopServing(segment: segment), .none, &group)
            case .log(let level, let message):
                logger.log(level: level, "\(message)")
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
            let adapter = SupervisorCore.adapterName(of: path)
            clusterStep(.heard(address: record.address, adapter: adapter, rssi: rssi), &group)
        }
        clusterStep(.tick, &group)
    }

    /// A wanted device's RSSI as the adapter heard it.
    func clusterHeard(_ path: String, _ group: inout DiscardingTaskGroup) {
        guard let cluster, let address = BluetoothAddress(BlueZDevice.address(fromPath: path)),
              cluster.wants(address: address),
              let rssi = central.withTree({ $0.properties(path: path, interface: BlueZ.device)?["RSSI"]?.int })
        else { return }
        clusterStep(.heard(address: address, adapter: SupervisorCore.adapterName(of: path), rssi: rssi), &group)
    }

    /// A session's link came up or went down (or the session ended).
    func clusterLink(_ path: String, up: Bool, _ group: inout DiscardingTaskGroup) {
        guard cluster != nil, let record = core.devices[path] else { return }
        if !up { advertisementsHeard[path] = nil }
        let adapter = up ? SupervisorCore.adapterName(of: path) : nil
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
