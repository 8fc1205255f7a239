import BridgeCore

/// The cluster's gate (SPEC §10): with `cluster.enabled`, a wanted device gets a session only while the cluster
/// lets this bridge serve it (``ClusterCore`` decides; the executor tells the core ``Event/serve(segment:)`` and
/// ``Event/stopServing(segment:)``). Every wanted device found is told to the cluster once
/// (``Action/clusterWant(segment:address:service:)``), so that this bridge's sightings carry it.
extension SupervisorCore {
    /// What the gate knows.
    package struct ClusterGate: Sendable, Equatable {
        /// The wanted devices told to the cluster: segment → address.
        package var wanted: [String: BluetoothAddress] = [:]
        /// The devices this bridge serves.
        package var served: Set<String> = []
    }

    /// How a device with this policy is served in a cluster.
    package static func clusterService(_ policy: ConnectionPolicy) -> ClusterService {
        if case .advertisement = policy { return .listen }
        return .link
    }

    /// Whether the device may have a session now; tells the cluster of a wanted device the first time.
    package mutating func clusterAdmits(
        segment: String, address: BluetoothAddress, policy: ConnectionPolicy, _ out: inout [Action]
    ) -> Bool {
        guard var gate = clusterGate else { return true }
        if gate.served.contains(segment) { return true }
        if gate.wanted[segment] == nil {
            gate.wanted[segment] = address
            out.append(.clusterWant(segment: segment, address: address, service: Self.clusterService(policy)))
        }
        clusterGate = gate
        return false
    }

    /// At start: the devices the configuration names by address and the stored peripherals are wanted at once (the
    /// others when found).
    package mutating func clusterWantKnown(_ out: inout [Action]) {
        guard clusterGate != nil else { return }
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

    /// A device object path of a wanted device (on the first adapter: the executor reads the address's objects on
    /// every adapter with it).
    package func clusterPath(_ segment: String) -> String? {
        guard let address = clusterGate?.wanted[segment], let adapter = knownAdapters.first else { return nil }
        return BlueZNames.devicePath(adapterName: adapter, address: address.description)
    }

    /// Whether the cluster lets this bridge serve the device at this address (rule 6 for stored peripherals).
    package func clusterServes(address: String) -> Bool {
        guard let gate = clusterGate else { return true }
        return gate.served.contains { gate.wanted[$0]?.description == address }
    }

    /// The cluster gives the device to this bridge: its session starts (with the device object BlueZ has; a stored
    /// peripheral BlueZ no longer has is connected with `ConnectDevice`; else the scan finds it).
    package mutating func serve(_ segment: String, now: Instant, tree: Tree, _ out: inout [Action]) {
        guard let address = clusterGate?.wanted[segment]?.description else { return }
        clusterGate?.served.insert(segment)
        guard sessionOf[address] == nil else { return }
        if let first = objects(of: address, tree: tree).first {
            consider(first.path, connectNow: isStored(address), now: now, tree: tree, &out)
        } else if isStored(address) {
            connectStored(only: address, now: now, tree: tree, &out)
        } else {
            out.append(.log(.info, "\(segment) is ours; waiting for the scan to find \(address)"))
        }
    }

    /// The cluster takes the device from this bridge: its session stops (disconnecting).
    package mutating func stopServing(_ segment: String, _ out: inout [Action]) {
        guard clusterGate?.served.remove(segment) != nil else { return }
        for record in devices.values.sorted(by: { $0.path < $1.path }) where record.segment == segment {
            out.append(.send(path: record.path, .stop))
        }
    }
}
