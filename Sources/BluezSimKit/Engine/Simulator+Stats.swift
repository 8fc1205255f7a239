import DBusKit
import Synchronization

/// Counters for tests (control `GetStats`): connections, notifications (signalled or written to
/// acquired sockets), writes, sessions.
extension Simulator {
    /// Totals and per-device counters as an `a{sv}` dictionary (layout: scripts/sim/README.md).
    public func statistics() -> [String: DBusValue] {
        var total = DeviceStats()
        var notifications: UInt64 = 0
        var signalled: UInt64 = 0
        var socketed: UInt64 = 0
        var socketDrops: UInt64 = 0
        var acquired = 0
        var sessions = 0
        var connected = 0
        var entries: [DBusDictEntry] = []
        var seen = Set<String>()
        var byAdapter: [String: DeviceStats] = [:]
        var linksByAdapter: [String: [String]] = [:]
        var linkEntries: [DBusDictEntry] = []
        for path in deviceOrder {
            guard let d = devices[path] else { continue }
            let s = d.stats
            total.connectAttempts &+= s.connectAttempts
            total.connects &+= s.connects
            total.connectFailures &+= s.connectFailures
            total.linkConflicts &+= s.linkConflicts
            total.disconnects &+= s.disconnects
            total.linkLosses &+= s.linkLosses
            total.reads &+= s.reads
            total.readFailures &+= s.readFailures
            total.writes &+= s.writes
            total.writeFailures &+= s.writeFailures
            total.startNotifyCalls &+= s.startNotifyCalls
            total.stopNotifyCalls &+= s.stopNotifyCalls
            total.acquireNotifyCalls &+= s.acquireNotifyCalls
            var deviceSignalled: UInt64 = 0
            var deviceSocketed: UInt64 = 0
            var deviceDrops: UInt64 = 0
            var deviceAcquired = 0
            var deviceSessions = 0
            var notifying = 0
            var byUUID: [String: Int] = [:]
            var callsByUUID: [String: UInt64] = [:]
            var clients = Set<String>()
            for c in d.gatt.characteristics {
                deviceSignalled &+= c.notificationCount.load(ordering: .relaxed)
                deviceSocketed &+= c.socketNotificationCount.load(ordering: .relaxed)
                deviceDrops &+= c.socketDropCount.load(ordering: .relaxed)
                let (n, active, names, calls) = c.state.withLock { ($0.sessions.count, $0.active, $0.sessions, $0.startNotifyCalls) }
                if c.state.withLock({ $0.acquisition?.socket != nil }) { deviceAcquired += 1 }
                deviceSessions += n
                if active { notifying += 1 }
                if n > 0 { byUUID[c.uuid, default: 0] += n }
                if calls > 0 { callsByUUID[c.uuid, default: 0] &+= calls }
                clients.formUnion(names)
            }
            let deviceNotifications = deviceSignalled &+ deviceSocketed
            notifications &+= deviceNotifications
            signalled &+= deviceSignalled
            socketed &+= deviceSocketed
            socketDrops &+= deviceDrops
            acquired += deviceAcquired
            sessions += deviceSessions
            let isConnected = d.connection == .connected
            if isConnected { connected += 1 }
            let adapter = d.adapterName
            var perAdapter = byAdapter[adapter] ?? DeviceStats()
            perAdapter.connectAttempts &+= s.connectAttempts
            perAdapter.connects &+= s.connects
            perAdapter.connectFailures &+= s.connectFailures
            perAdapter.linkConflicts &+= s.linkConflicts
            perAdapter.disconnects &+= s.disconnects
            perAdapter.linkLosses &+= s.linkLosses
            perAdapter.writes &+= s.writes
            byAdapter[adapter] = perAdapter
            if isConnected {
                linksByAdapter[adapter, default: []].append(d.spec.address)
                linkEntries.append(DBusDictEntry(.string(d.spec.address), .string(adapter)))
            }
            let key = seen.insert(d.spec.address).inserted ? d.spec.address : adapter + "/" + d.spec.address
            let values: [String: DBusValue] = [
                "adapter": .string(adapter),
                "connected": .bool(isConnected),
                "connecting": .bool(d.connection == .connecting),
                "exported": .bool(d.exported),
                "known": .bool(d.exported && !d.temporary),
                "paired": .bool(d.paired),
                "bond_authenticated": .bool(d.paired && d.bondAuthenticated),
                "peripheral_forgot_bond": .bool(d.peripheralForgotBond),
                "pairing_attempts": .uint64(s.pairingAttempts),
                "pairings": .uint64(s.pairings),
                "pairing_failures": .uint64(s.pairingFailures),
                "in_range": .bool(d.inRange),
                "services_resolved": .bool(d.servicesResolved),
                "resolve_mode": .string(d.resolveBehaviour.description),
                "connect_attempts": .uint64(s.connectAttempts),
                "connects": .uint64(s.connects),
                "connect_failures": .uint64(s.connectFailures),
                "link_conflicts": .uint64(s.linkConflicts),
                "connects_while_linked": .uint64(s.connectsWhileLinked),
                "mean_rssi": .int16(d.meanRSSI),
                "disconnects": .uint64(s.disconnects),
                "link_losses": .uint64(s.linkLosses),
                "reads": .uint64(s.reads),
                "read_failures": .uint64(s.readFailures),
                "writes": .uint64(s.writes),
                "write_failures": .uint64(s.writeFailures),
                "start_notify_calls": .uint64(s.startNotifyCalls),
                "stop_notify_calls": .uint64(s.stopNotifyCalls),
                "notifications": .uint64(deviceNotifications),
                "notifications_signal": .uint64(deviceSignalled),
                "notifications_socket": .uint64(deviceSocketed),
                "notify_socket_drops": .uint64(deviceDrops),
                "acquire_notify_calls": .uint64(s.acquireNotifyCalls),
                "notify_acquired": .uint32(UInt32(deviceAcquired)),
                "notify_sessions": .uint32(UInt32(deviceSessions)),
                "notifying": .uint32(UInt32(notifying)),
                "notify_sessions_by_uuid": .dictionary(key: "s", value: "u", byUUID.keys.sorted().map {
                    DBusDictEntry(.string($0), .uint32(UInt32(byUUID[$0]!)))
                }),
                "start_notify_calls_by_uuid": .dictionary(key: "s", value: "t", callsByUUID.keys.sorted().map {
                    DBusDictEntry(.string($0), .uint64(callsByUUID[$0]!))
                }),
                "notify_clients": .stringArray(clients.sorted()),
            ]
            entries.append(DBusDictEntry(.string(key), .stringVariantDict(values)))
        }
        var discoveryStarts: UInt64 = 0
        var discovering = false
        var adapterEntries: [DBusDictEntry] = []
        for path in adapterOrder {
            guard let a = adapters[path] else { continue }
            discoveryStarts &+= a.discoveryStarts
            discovering = discovering || a.discovering
            let counts = byAdapter[a.spec.name] ?? DeviceStats()
            let linked = linksByAdapter[a.spec.name] ?? []
            adapterEntries.append(DBusDictEntry(.string(a.spec.name), .stringVariantDict([
                "connect_attempts": .uint64(counts.connectAttempts),
                "connects": .uint64(counts.connects),
                "connect_failures": .uint64(counts.connectFailures),
                "link_conflicts": .uint64(counts.linkConflicts),
                "disconnects": .uint64(counts.disconnects),
                "link_losses": .uint64(counts.linkLosses),
                "writes": .uint64(counts.writes),
                "connected_devices": .uint32(UInt32(linked.count)),
                "links": .stringArray(linked),
                "present": .bool(a.present),
                "powered": .bool(a.powered),
                "discovering": .bool(a.discovering),
                "discovery_clients": .uint32(UInt32(a.discoveryClients.count)),
                "discovery_starts": .uint64(a.discoveryStarts),
                "stalled": .bool(a.discovering && a.stalledGeneration == a.discoveryGeneration),
            ])))
        }
        return [
            "connect_attempts": .uint64(total.connectAttempts),
            "connects": .uint64(total.connects),
            "connect_failures": .uint64(total.connectFailures),
            "link_conflicts": .uint64(total.linkConflicts),
            "links": .dictionary(key: "s", value: "s", linkEntries),
            "link_dir": .string(options.linkDirectory ?? ""),
            "disconnects": .uint64(total.disconnects),
            "link_losses": .uint64(total.linkLosses),
            "reads": .uint64(total.reads),
            "read_failures": .uint64(total.readFailures),
            "writes": .uint64(total.writes),
            "write_failures": .uint64(total.writeFailures),
            "start_notify_calls": .uint64(total.startNotifyCalls),
            "stop_notify_calls": .uint64(total.stopNotifyCalls),
            "notifications": .uint64(notifications),
            "notifications_signal": .uint64(signalled),
            "notifications_socket": .uint64(socketed),
            "notify_socket_drops": .uint64(socketDrops),
            "acquire_notify_calls": .uint64(total.acquireNotifyCalls),
            "notify_acquired": .uint32(UInt32(acquired)),
            "notify_sessions": .uint32(UInt32(sessions)),
            "connected_devices": .uint32(UInt32(connected)),
            "discovery_starts": .uint64(discoveryStarts),
            "discovery_start_failures": .uint64(discoveryStartFailures),
            "advertisement_reports": .uint64(advertisementReports),
            "discovering": .bool(discovering),
            "devices": .dictionary(key: "s", value: "a{sv}", entries),
            "adapters": .dictionary(key: "s", value: "a{sv}", adapterEntries),
        ]
    }

    /// Zeroes every counter (current states such as sessions and connections stay).
    public func resetStatistics() {
        for path in deviceOrder {
            guard let d = devices[path] else { continue }
            d.stats = DeviceStats()
            for c in d.gatt.characteristics {
                c.notificationCount.store(0, ordering: .relaxed)
                c.socketNotificationCount.store(0, ordering: .relaxed)
                c.socketDropCount.store(0, ordering: .relaxed)
                c.state.withLock { $0.startNotifyCalls = 0 }
            }
        }
        for path in adapterOrder { adapters[path]?.discoveryStarts = 0 }
        discoveryStartFailures = 0
        advertisementReports = 0
    }
}
