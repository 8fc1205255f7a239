import BridgeBase
import BridgeCore
import Testing

@testable import Bridge
@testable import RuntimeCore

/// The health object's `cluster` part, from a cluster core (SPEC §9, §10).
@Suite struct ClusterHealthTests {
    @Test("a bridge alone that serves a device: its health names it, as owner and as served")
    func servingAlone() throws {
        var core = ClusterCore(settings: ClusterSettings(bridgeID: "kitchen"), baseTopic: "ble")
        let polar = try #require(BluetoothAddress("C8:12:34:56:78:9A"))
        let at = { (ms: Int64) in BridgeInstant(offset: .milliseconds(ms)) }
        _ = core.handle(.brokerConnected, now: at(0), unixTime: 100)
        _ = core.handle(.freeSlots(["hci0": 7]), now: at(10), unixTime: 100)
        _ = core.handle(.want(segment: "polar", address: polar, service: .link), now: at(20), unixTime: 100)
        _ = core.handle(.heard(address: polar, adapter: "hci0", rssi: -60), now: at(30), unixTime: 100)
        _ = core.handle(.tick, now: at(500), unixTime: 100)
        let actions = core.handle(.tick, now: at(5_000), unixTime: 105)
        let claims = actions.compactMap { if case .publish("ble/polar/owner", let payload) = $0 { payload } else { nil } }
        #expect(claims.count == 1, "\(actions)")
        for claim in claims { _ = core.handle(.message(.owner(device: "polar"), payload: claim), now: at(5_050), unixTime: 105) }
        _ = core.handle(.tick, now: at(6_000), unixTime: 106)

        let health = core.health
        #expect(health.serving == ["polar"] && health.owners == ["polar": "kitchen"] && health.bridges == ["kitchen": true])
        let json = HealthSnapshot(
            uptime: 1, rssBytes: nil, published: 0, dropped: 0, mqttReconnects: 0, bluezAvailable: true, adapter: "hci0",
            adapterPresent: true, powered: true, discovering: true, devices: [], slotsMax: 7, slotsInUse: 1, slotsWaiting: 0,
            cluster: health)
        #expect(
            JSONValue.object(json.json)["cluster"].map { String(decoding: $0.jsonBytes, as: UTF8.self) }
                == #"{"bridge":"kitchen","serving":["polar"],"owners":{"polar":"kitchen"},"bridges":{"kitchen":"online"}}"#)
        #expect(json.prometheus(version: "t").contains("ble_mqtt_bridge_cluster_devices_served 1\n"))
    }
}
