@testable import BridgeCore

typealias Ownership = OwnershipCore<FakeInstant>

/// Builders for the cluster tests.
enum ClusterFixture {
    static func t(_ seconds: Double) -> FakeInstant { .seconds(seconds) }

    static func core(_ id: String, wanted: [String: ClusterService] = ["d1": .link]) -> Ownership {
        Ownership(settings: ClusterSettings(bridgeID: id, switchRule: SwitchRule(margin: 10, after: .seconds(30))), wanted: wanted)
    }

    static func address(_ device: String) -> BluetoothAddress {
        BluetoothAddress(value: UInt64(device.utf8.reduce(0) { $0 &* 31 &+ Int($1) }) & 0xFFFF_FFFF_FFFF)
    }

    /// Sightings on `hci0` with `slots` free: device → RSSI (nil: unknown) and whether this bridge is connected.
    static func sightings(slots: Int = 1, _ devices: [String: (rssi: Int?, connected: Bool)]) -> SightingsPayload {
        SightingsPayload(
            time: 0, adapters: ["hci0": .init(freeSlots: slots)],
            devices: devices.mapValues { .init(address: address("x"), rssi: $0.rssi, adapter: "hci0", connected: $0.connected) })
    }

    static func heard(_ rssi: Int?, connected: Bool = false) -> (rssi: Int?, connected: Bool) { (rssi, connected) }

    static func owner(_ bridge: String) -> OwnerPayload { OwnerPayload(bridge: bridge, adapter: "hci0", since: 1) }
}

extension Ownership {
    /// Connects to the broker at `at` and delivers the retained topics: both bridges online, these sightings.
    mutating func join(at: Double, online: [String], sightings: [String: SightingsPayload], owners: [String: String] = [:])
        -> [ClusterAction]
    {
        var actions = handle(.brokerConnected, now: ClusterFixture.t(at))
        for bridge in online { actions += handle(.bridgeState(bridge: bridge, online: true), now: ClusterFixture.t(at)) }
        for (bridge, payload) in sightings.sorted(by: { $0.key < $1.key }) {
            actions += handle(.sightings(bridge: bridge, payload), now: ClusterFixture.t(at))
        }
        for (device, bridge) in owners.sorted(by: { $0.key < $1.key }) {
            actions += handle(.owner(device: device, ClusterFixture.owner(bridge)), now: ClusterFixture.t(at))
        }
        return actions
    }

    mutating func at(_ seconds: Double, _ event: ClusterEvent) -> [ClusterAction] {
        handle(event, now: ClusterFixture.t(seconds))
    }
}
