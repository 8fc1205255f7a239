import BridgeCore

/// A new set of devices at run time (SPEC §14): the configuration's `devices` become bridge.yaml's plus the run-time
/// entries, and every running session whose entry changed ends (a removed device is forgotten; a renamed or changed
/// one starts again under its new entry when its session has ended); devices BlueZ already knows that an entry now
/// wants get their session at once, the others when the scan finds them.
extension SupervisorCore {
    /// Serves the run-time book's devices: `removed` segments are forgotten (their retained topics cleared),
    /// `renamed` (old → new segment) keep their Home Assistant configs (same `unique_id`: same node, same entities).
    package mutating func applyAdded(
        removed: Set<String>, renamed: [String: String] = [:], now: Instant, tree: Tree, _ out: inout [Action]
    ) {
        out.append(.writeAddedDevices(added.jsonEntries))
        let wantedBefore = Set(cluster?.ownership.wanted.keys ?? [:].keys)
        let old = config
        let oldFilter = discoveryFilter
        config.devices = added.merged(with: fixedDevices, trackers: config.trackers)
        topics = TopicMapper(config: config)
        out.append(.devicesChanged(config.devices))
        for segment in removed.union(renamed.keys).sorted() {
            // Also when no session runs: a retained availability of an earlier run, the owner claim.
            out.append(.publishRetained(topic: topics.availability(device: segment), payload: []))
            clusterUnwant(segment, now: now, tree: tree, &out)
        }
        for record in devices.values.sorted(by: { $0.segment < $1.segment }) {
            let name = managedSnapshots[record.path].flatMap { $0.name ?? $0.alias }
            guard old.device(address: record.address, name: name) != config.device(address: record.address, name: name)
            else { continue }
            if removed.contains(record.segment) {
                forget(record.path, &out)
                clearOnEnd[record.path] = record.segment
                continue
            }
            out.append(.log(.info, "\(record.address) (\(record.segment)): its entry changed, starting its session again"))
            _ = removeRecord(record.path)
            out.append(.unregister(path: record.path))
            out.append(.send(path: record.path, .stop))
            if renamed[record.segment] != nil {
                clearOnEnd[record.path] = record.segment
                out.append(.forgetLastValues(segment: record.segment))
            } else {
                out.append(.publishAvailability(segment: record.segment, online: false))
            }
        }
        // Devices BlueZ knows that an entry now wants.
        for path in tree.devices.keys.sorted() where !sessions.contains(path) {
            consider(path, now: now, tree: tree, &out)
        }
        clusterWantKnown(&out)
        for segment in Set(cluster?.ownership.wanted.keys ?? [:].keys).subtracting(wantedBefore).sorted() {
            clusterStep(.holdClaims(segment: segment), now: now, unixTime: 0, tree: tree, &out)
        }
        refreshDiscoveryFilter(from: oldFilter, &out)
        updateDiscovery(tree: tree, &out)
        listDevices(force: false, &out)
    }

    /// The scan filter the configuration asks for: a UUID filter only without `devices`, advertisements and a `scan`
    /// request (which hears every advertiser).
    package var discoveryFilter: DiscoveryFilter {
        let advertisements = listensToAdvertisements || !scans.isEmpty
        return DiscoveryFilter(
            uuids: config.devices.isEmpty && !advertisements ? config.bluetooth.services.map(\.uuidString) : [],
            duplicateData: advertisements)
    }

    /// A running scan takes a changed filter (`SetDiscoveryFilter` applies to it; `StartDiscovery` answers
    /// `InProgress`, which keeps it).
    package mutating func refreshDiscoveryFilter(from old: DiscoveryFilter, _ out: inout [Action]) {
        let filter = discoveryFilter
        guard filter != old else { return }
        for name in radios.keys.sorted() where radios[name]?.discovery.ours == true && radios[name]?.discovery.starting == false {
            radios[name]?.discovery.starting = true
            out.append(.startDiscovery(adapter: name, uuids: filter.uuids, duplicateData: filter.duplicateData))
        }
    }

    /// A session ended: the retained availability of a removed or renamed device is cleared now that nothing
    /// publishes it any more.
    package mutating func clearAfterSession(_ path: String, _ out: inout [Action]) {
        guard let segment = clearOnEnd.removeValue(forKey: path) else { return }
        out.append(.publishRetained(topic: topics.availability(device: segment), payload: []))
    }

    /// The cluster stops wanting a device that is gone or renamed (its owner claim, if this bridge's, is emptied).
    private mutating func clusterUnwant(_ segment: String, now: Instant, tree: Tree, _ out: inout [Action]) {
        clusterStep(.unwant(segment: segment), now: now, unixTime: 0, tree: tree, &out)
    }
}

/// The scan filter (`SetDiscoveryFilter`'s UUIDs and `DuplicateData`).
package struct DiscoveryFilter: Sendable, Equatable {
    package var uuids: [String]
    package var duplicateData: Bool
}
