import BridgeCore
import Testing

@testable import RuntimeCore

/// ``ClusterCore`` with trackers (SPEC §12): wanted from their first sighting, their entry follows the phone's new
/// address and says when it was heard, other bridges' entries are reported with their age, departures too.
@Suite struct ClusterCoreTrackerTests {
    static func at(_ ms: Int64) -> BridgeInstant { BridgeInstant(offset: .milliseconds(ms)) }
    static let first = BluetoothAddress("4A:11:22:33:44:55")!
    static let second = BluetoothAddress("5B:66:77:88:99:AA")!

    static func core() -> ClusterCore {
        ClusterCore(settings: ClusterSettings(bridgeID: "kitchen"), baseTopic: "ble", trackers: ["alice"])
    }

    static func ownSightings(_ actions: [ClusterCore.Action]) throws -> SightingsPayload? {
        let payloads = actions.compactMap { if case .publish("ble/bridges/kitchen/sightings", let p) = $0 { p } else { nil } }
        return try payloads.last.map { try SightingsPayload(bytes: $0) }
    }

    @Test("a tracker's entry: wanted when first heard, at its newest address, with last_seen")
    func ownEntry() throws {
        var core = Self.core()
        _ = core.handle(.brokerConnected, now: Self.at(0), unixTime: 1_000)
        _ = core.handle(.freeSlots(["hci0": 0]), now: Self.at(10), unixTime: 1_000)
        _ = core.handle(.trackerHeard(segment: "alice", address: Self.first, adapter: "hci0", rssi: -60), now: Self.at(100), unixTime: 1_000)
        #expect(core.ownership.wanted["alice"] == .listen)
        var entry = try #require(try Self.ownSightings(core.handle(.tick, now: Self.at(500), unixTime: 1_000))?.devices["alice"])
        #expect(entry.address == Self.first && entry.rssi == -60 && entry.lastSeen == 1_000)
        // The phone's next address: the same entry, moved; heard 3 s before the next beat.
        _ = core.handle(.trackerHeard(segment: "alice", address: Self.second, adapter: "hci0", rssi: -62), now: Self.at(2_000), unixTime: 1_001)
        entry = try #require(try Self.ownSightings(core.handle(.tick, now: Self.at(5_500), unixTime: 1_005))?.devices["alice"])
        #expect(entry.address == Self.second, "\(entry)")
        #expect(entry.lastSeen == Int64(1_002), "heard 3.5 s before the beat: \(entry)")
        #expect(core.wants(address: Self.second) && !core.wants(address: Self.first))
    }

    @Test("other bridges' tracker entries are reported with their age; an old reading has no strength; departures")
    func othersEntries() throws {
        var core = Self.core()
        _ = core.handle(.brokerConnected, now: Self.at(0), unixTime: 1_000)
        let payload = SightingsPayload(
            time: 2_000, adapters: ["hci0": .init(freeSlots: 1)],
            devices: [
                "alice": .init(address: Self.first, rssi: -55, adapter: "hci0", connected: false, lastSeen: 1_998),
                "polar": .init(address: Self.second, rssi: -70, adapter: "hci0", connected: false),
            ])
        var actions = core.handle(.message(.sightings(bridge: "garage"), payload: payload.jsonBytes), now: Self.at(100), unixTime: 2_000)
        #expect(actions.contains(.trackerSightings(bridge: "garage", ["alice": RemoteSighting(rssi: -55, heardAgo: .seconds(2))])), "\(actions)")
        var stale = payload
        stale.devices["alice"]?.lastSeen = 1_950
        actions = core.handle(.message(.sightings(bridge: "garage"), payload: stale.jsonBytes), now: Self.at(200), unixTime: 2_000)
        #expect(actions.contains(.trackerSightings(bridge: "garage", ["alice": RemoteSighting(rssi: nil, heardAgo: .seconds(50))])), "\(actions)")
        actions = core.handle(.message(.bridgeState(bridge: "garage"), payload: Array("offline".utf8)), now: Self.at(300), unixTime: 2_000)
        #expect(actions.contains(.bridgeGone(bridge: "garage")), "\(actions)")
        // Without trackers nothing of this is reported.
        var plain = ClusterCore(settings: ClusterSettings(bridgeID: "kitchen"), baseTopic: "ble")
        _ = plain.handle(.brokerConnected, now: Self.at(0), unixTime: 1_000)
        actions = plain.handle(.message(.sightings(bridge: "garage"), payload: payload.jsonBytes), now: Self.at(100), unixTime: 2_000)
        #expect(!actions.contains { if case .trackerSightings = $0 { true } else { false } })
    }
}
