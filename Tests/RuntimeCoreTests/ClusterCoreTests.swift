import BridgeCore
import Testing

@testable import RuntimeCore

/// ``ClusterCore``: the ownership and the sightings behind one step, with the broker's topics and payloads.
@Suite struct ClusterCoreTests {
    static let polar = BluetoothAddress("C8:12:34:56:78:9A")!

    static func at(_ ms: Int64) -> BridgeInstant { BridgeInstant(offset: .milliseconds(ms)) }

    static func core() -> ClusterCore {
        ClusterCore(settings: ClusterSettings(bridgeID: "kitchen"), baseTopic: "ble")
    }

    static func published(_ actions: [ClusterCore.Action], _ topic: String) -> [[UInt8]] {
        actions.compactMap { if case .publish(topic, let payload) = $0 { payload } else { nil } }
    }

    static func sightings(_ bridge: String, rssi: Int, freeSlots: Int = 3) -> [UInt8] {
        SightingsPayload(
            time: 1, adapters: ["hci0": .init(freeSlots: freeSlots)],
            devices: ["polar": .init(address: polar, rssi: rssi, adapter: "hci0", connected: false)]
        ).jsonBytes
    }

    @Test("alone on the broker: sightings at once, the claim after the quiet time, serving after the claim wait")
    func claimAlone() throws {
        var core = Self.core()
        var actions = core.handle(.brokerConnected, now: Self.at(0), unixTime: 100)
        // The first sightings go out at once (nothing wanted yet).
        #expect(Self.published(actions, "ble/bridges/kitchen/sightings").count == 1)
        _ = core.handle(.freeSlots(["hci0": 7]), now: Self.at(10), unixTime: 100)
        _ = core.handle(.want(segment: "polar", address: Self.polar, service: .link), now: Self.at(20), unixTime: 100)
        _ = core.handle(.heard(address: Self.polar, adapter: "hci0", rssi: -60), now: Self.at(30), unixTime: 100)
        // A device heard first: the next tick publishes the sightings that carry it (the others must know).
        #expect(core.nextDeadline(after: Self.at(30)) == Self.at(500))
        actions = core.handle(.tick, now: Self.at(500), unixTime: 100)
        let own = try #require(Self.published(actions, "ble/bridges/kitchen/sightings").last)
        #expect(try SightingsPayload(bytes: own).devices["polar"]?.rssi == -60)
        // Inside the 5 s quiet time: no claim.
        actions = core.handle(.tick, now: Self.at(4_000), unixTime: 104)
        #expect(Self.published(actions, "ble/polar/owner").isEmpty)
        actions = core.handle(.tick, now: Self.at(5_000), unixTime: 105)
        let claim = try #require(Self.published(actions, "ble/polar/owner").first)
        #expect(try OwnerPayload(bytes: claim) == OwnerPayload(bridge: "kitchen", adapter: "hci0", since: 105))
        #expect(!actions.contains(.serve(segment: "polar", adapter: "hci0")))
        // The echo of the claim, then the claim wait: served.
        _ = core.handle(.message(.owner(device: "polar"), payload: claim), now: Self.at(5_050), unixTime: 105)
        // (5.5 s: the sightings' rate limit after the claim's request.)
        #expect(core.nextDeadline(after: Self.at(5_050)) == Self.at(5_500))
        actions = core.handle(.tick, now: Self.at(5_999), unixTime: 105)
        #expect(!actions.contains(.serve(segment: "polar", adapter: "hci0")))
        actions = core.handle(.tick, now: Self.at(6_000), unixTime: 106)
        #expect(actions.contains(.serve(segment: "polar", adapter: "hci0")), "\(actions)")
        #expect(core.commandRole(for: "polar") == .execute)
        #expect(core.ownership.isServing("polar") && core.owner(of: "polar") == "kitchen")
    }

    @Test("a stronger bridge claims; this one stays idle and ignores the device's commands")
    func strongerBridgeClaims() throws {
        var core = Self.core()
        _ = core.handle(.brokerConnected, now: Self.at(0), unixTime: 100)
        _ = core.handle(.freeSlots(["hci0": 7]), now: Self.at(0), unixTime: 100)
        _ = core.handle(.message(.bridgeState(bridge: "garage"), payload: Array("online".utf8)), now: Self.at(10), unixTime: 100)
        _ = core.handle(.want(segment: "polar", address: Self.polar, service: .link), now: Self.at(20), unixTime: 100)
        _ = core.handle(.heard(address: Self.polar, adapter: "hci0", rssi: -80), now: Self.at(30), unixTime: 100)
        _ = core.handle(.message(.sightings(bridge: "garage"), payload: Self.sightings("garage", rssi: -50)), now: Self.at(4_900), unixTime: 104)
        var actions = core.handle(.tick, now: Self.at(5_000), unixTime: 105)
        #expect(Self.published(actions, "ble/polar/owner").isEmpty, "\(actions)")
        // Nobody owns it yet: "garage" sorts first, so it answers the commands, not this bridge.
        #expect(core.commandRole(for: "polar") == .ignore)
        let claim = OwnerPayload(bridge: "garage", adapter: "hci0", since: 105).jsonBytes
        actions = core.handle(.message(.owner(device: "polar"), payload: claim), now: Self.at(5_100), unixTime: 105)
        #expect(!actions.contains { if case .serve = $0 { true } else { false } })
        #expect(core.roles == CommandRoles(owners: ["polar": "garage"], answersUnowned: false))
        // garage goes offline: this bridge claims at once (the quiet time is over).
        actions = core.handle(.message(.bridgeState(bridge: "garage"), payload: Array("offline".utf8)), now: Self.at(9_000), unixTime: 109)
        #expect(Self.published(actions, "ble/polar/owner").count == 1, "\(actions)")
    }

    @Test("this bridge's own sightings echo is ignored; malformed payloads are logged and count as empty")
    func ownEchoAndMalformed() throws {
        var core = Self.core()
        _ = core.handle(.brokerConnected, now: Self.at(0), unixTime: 100)
        let before = core.ownership.sightings["kitchen"]
        let echo = core.handle(
            .message(.sightings(bridge: "kitchen"), payload: Self.sightings("kitchen", rssi: -20)), now: Self.at(100), unixTime: 100)
        #expect(echo.isEmpty)
        #expect(core.ownership.sightings["kitchen"] == before)
        let bad = core.handle(.message(.owner(device: "polar"), payload: Array("{nope".utf8)), now: Self.at(200), unixTime: 100)
        #expect(bad.contains { if case .log(.warning, let line) = $0 { line.contains("owner claim of polar") } else { false } })
        #expect(core.ownership.owners["polar"] == nil)
    }

    @Test("the broker lost: every served device is stopped")
    func brokerLost() throws {
        var core = Self.core()
        _ = core.handle(.brokerConnected, now: Self.at(0), unixTime: 100)
        _ = core.handle(.freeSlots(["hci0": 7]), now: Self.at(0), unixTime: 100)
        _ = core.handle(.want(segment: "polar", address: Self.polar, service: .link), now: Self.at(0), unixTime: 100)
        _ = core.handle(.heard(address: Self.polar, adapter: "hci0", rssi: -60), now: Self.at(0), unixTime: 100)
        let claim = try #require(Self.published(core.handle(.tick, now: Self.at(5_000), unixTime: 105), "ble/polar/owner").first)
        _ = core.handle(.message(.owner(device: "polar"), payload: claim), now: Self.at(5_010), unixTime: 105)
        #expect(core.handle(.tick, now: Self.at(6_000), unixTime: 106).contains(.serve(segment: "polar", adapter: "hci0")))
        _ = core.handle(.link(segment: "polar", address: Self.polar, adapter: "hci0"), now: Self.at(6_500), unixTime: 106)
        let lost = core.handle(.brokerDisconnected, now: Self.at(7_000), unixTime: 107)
        #expect(lost.contains(.stopServing(segment: "polar")), "\(lost)")
        #expect(core.nextDeadline(after: Self.at(7_000)) == nil)
    }
}
