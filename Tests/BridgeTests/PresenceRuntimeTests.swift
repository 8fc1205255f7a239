import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// SPEC §12 over the fakes: trackers matched by IRK, address and iBeacon on the advertisement
/// path, published retained on `{base}/{tracker}/presence`; `not_home` after `away_after`;
/// nothing for advertisers no tracker names.
@Suite struct PresenceRuntimeTests {
    static let irk = "ec0234a357c8ad05341010a60a397d9b"
    static let beaconUUID = "e2c56db5-dffb-48d2-b060-d0f5a71096e0"

    static let config = RuntimeHarness.base + """

        trackers:
          - name: alice_phone
            match: { irk: "\(irk)" }
            away_after: 1m
          - name: keys
            match: { address: "C0:DE:00:00:00:01" }
          - name: beacon
            match: { ibeacon: "\(beaconUUID):1:2" }
        """

    /// iBeacon manufacturer data (company 0x004c) for `major`/`minor`.
    static func iBeacon(major: UInt16, minor: UInt16) -> [UInt16: [UInt8]] {
        let identity = IBeacon.Identity(uuid: BluetoothUUID(beaconUUID)!, major: major, minor: minor)
        return [IBeacon.companyID: IBeacon(identity: identity, measuredPower: -59).manufacturerData]
    }

    static func payload(_ h: RuntimeHarness, _ tracker: String) throws -> JSONValue {
        try JSONParser.parse(Array(try #require(h.broker.last("ble/\(tracker)/presence")).utf8))
    }

    @Test("a phone's rotating addresses stay one tracker; an iBeacon; strangers never published; not_home after away_after")
    func trackers() async throws {
        let h = try RuntimeHarness(Self.config)
        let key = try #require(IdentityResolvingKey(hex: Self.irk))
        let first = try #require(key.resolvablePrivateAddress(random: 0x12345))
        let second = try #require(key.resolvablePrivateAddress(random: 0x2_0001))
        try await h.run {
            h.runtime.supervisorMailbox.send(.brokerConnected)
            let phone = h.central.addDevice(first.description, name: "", services: [:], addressType: "random")
            h.central.advertise(phone, rssi: -60, manufacturerData: [0x004C: [0x10, 0x05, 0x01]])
            try await h.eventually("alice home") { h.broker.last("ble/alice_phone/presence") != nil }
            var alice = try Self.payload(h, "alice_phone")
            #expect(alice["state"]?.stringValue == "home")
            #expect(alice["rssi"]?.int64Value == -60)
            #expect(alice["bridge"]?.stringValue == "test")
            #expect(alice["last_seen"]?.int64Value != nil)
            #expect(h.broker.all.first { $0.message.topic == "ble/alice_phone/presence" }?.message.retain == true)

            // The phone's next resolvable address: the same tracker, nothing new to say.
            let next = h.central.addDevice(second.description, name: "", services: [:], addressType: "random")
            h.central.advertise(next, rssi: -61)
            // A stranger with a random address, and an iBeacon of another major.
            let stranger = h.central.addDevice("5A:11:22:33:44:55", name: "", services: [:], addressType: "random")
            h.central.advertise(stranger, rssi: -40, manufacturerData: Self.iBeacon(major: 9, minor: 2))
            // The configured iBeacon, from a random static address.
            let tag = h.central.addDevice("F1:00:00:00:00:02", name: "", services: [:], addressType: "random")
            h.central.advertise(tag, rssi: -70, manufacturerData: Self.iBeacon(major: 1, minor: 2))
            try await h.eventually("beacon home") { h.broker.last("ble/beacon/presence") != nil }
            #expect(try Self.payload(h, "beacon")["state"]?.stringValue == "home")
            #expect(h.broker.texts("ble/alice_phone/presence").count == 1, "\(h.broker.texts("ble/alice_phone/presence"))")

            // Quiet for away_after (1 min): not_home, with no RSSI; the beacon (2 min) still home.
            try await h.advance(.seconds(30))
            #expect(h.broker.texts("ble/alice_phone/presence").count == 1)
            try await h.advance(.seconds(31))
            alice = try Self.payload(h, "alice_phone")
            #expect(alice["state"]?.stringValue == "not_home", "\(alice)")
            #expect(alice["rssi"] == .null)
            #expect(try Self.payload(h, "beacon")["state"]?.stringValue == "home")
            // Back: home again.
            h.central.advertise(next, rssi: -58)
            try await h.eventually("alice back") { (try? Self.payload(h, "alice_phone"))?["state"]?.stringValue == "home" }
            // The keys were never heard: not_home once their away_after (2 min) has passed since the start.
            #expect(h.broker.last("ble/keys/presence") == nil)
            try await h.advance(.seconds(60))
            #expect(try Self.payload(h, "keys")["state"]?.stringValue == "not_home")
        }
        let topics = Set(h.broker.all.map(\.message.topic).filter { $0.hasSuffix("/presence") })
        #expect(topics == ["ble/alice_phone/presence", "ble/beacon/presence", "ble/keys/presence"])
        #expect(h.central.calls("Connect").isEmpty, "trackers are never connected")
    }

    @Test("Home Assistant: a device_tracker per tracker, sent with the bridge's config")
    func discoveryConfigs() async throws {
        let h = try RuntimeHarness(Self.config + """

            homeassistant: { discovery: true }
            """)
        try await h.run {
            h.runtime.supervisorMailbox.send(.brokerConnected)
            try await h.eventually("the tracker configs") {
                ["alice_phone", "keys", "beacon"].allSatisfy { h.broker.last("homeassistant/device/ble_tracker_\($0)/config") != nil }
            }
            let config = try JSONParser.parse(Array(try #require(h.broker.last("homeassistant/device/ble_tracker_alice_phone/config")).utf8))
            let tracker = try #require(config["components"]?["presence"])
            #expect(tracker["platform"]?.stringValue == "device_tracker")
            #expect(tracker["source_type"]?.stringValue == "bluetooth_le")
            #expect(tracker["state_topic"]?.stringValue == "ble/alice_phone/presence")
            #expect(config["components"]?["rssi"]?["enabled_by_default"] == .bool(false))
            #expect(!(h.broker.last("homeassistant/device/ble_tracker_alice_phone/config") ?? "").contains(Self.irk), "never the key")
        }
    }

    @Test("trackers need the scan: no UUID filter, duplicate data on, discovery kept running")
    func discovery() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["180d"] }
            trackers:
              - name: keys
                match: { address: "C0:DE:00:00:00:01" }
            """)
        try await h.run {
            try await h.eventually("a scan") { !h.central.calls("StartDiscovery").isEmpty }
        }
        let filter = try #require(h.central.calls("SetDiscoveryFilter").last)
        #expect(filter.path.contains("duplicate=true"), "\(filter)")
        #expect(filter.path.contains("uuids=[]"), "\(filter)")
    }
}
