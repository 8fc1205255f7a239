import BlueZ
import BridgeCore
import MQTT
import Testing

@testable import Bridge

/// Several adapters in one bridge (SPEC §10), the runtime over the fakes: one session per device on the
/// adapter that hears it best, `bridge/devices` and health naming it, and an adapter powered off moving its
/// device to the other without two links.
@Suite struct MultiAdapterRuntimeTests {
    static let hci1 = "/org/bluez/hci1"
    static let address = "D0:5A:00:00:EC:01"
    static let services: [String: [(uuid: String, flags: [String], value: [UInt8])]] = [
        "ffe0": [("ffe1", ["read", "write"], [1])]
    ]

    static func harness() throws -> RuntimeHarness {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { adapters: [hci0, hci1], max_connections: 3 }
            health: { interval: 5s }
            devices:
              - match: { address: "\(address)" }
                name: echo
            """)
        h.central.addAdapter(hci1)
        // hci1 hears it 20 dB better.
        h.central.addDevice(address, name: "Echo", services: services, rssi: -80)
        h.central.addDevice(address, name: "Echo", services: services, adapter: hci1, rssi: -60)
        return h
    }

    @Test("a device heard by two adapters is connected once, through the stronger; devices and health name it")
    func connectedOnceThroughTheStronger() async throws {
        let h = try Self.harness()
        let on0 = BlueZ.devicePath(adapter: FakeCentral.adapter, address: Self.address)
        let on1 = BlueZ.devicePath(adapter: Self.hci1, address: Self.address)
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/echo/availability") == "online" }
            try await h.eventually("a health report") { !h.broker.texts("ble/bridge/health").isEmpty }
        }
        #expect(h.central.calls("Connect").map(\.path) == [on1])
        #expect(!h.central.calls("Connect").contains { $0.path == on0 })
        // Both adapters scanned.
        let scans = Set(h.central.calls("StartDiscovery").map(\.path))
        #expect(scans == [FakeCentral.adapter, Self.hci1], "\(scans)")
        let devices = try JSONParser.parse(Array((h.broker.last("ble/bridge/devices") ?? "").utf8))
        #expect(devices.arrayValue?.count == 1)
        #expect(devices.arrayValue?.first?["adapter"]?.stringValue == "hci1")
        let health = try JSONParser.parse(Array((h.broker.texts("ble/bridge/health").last ?? "").utf8))
        #expect(health["devices"]?["echo"]?["adapter"]?.stringValue == "hci1")
        #expect(health["slots"]?["hci1"]?["in_use"]?.int64Value == 1)
        #expect(health["slots"]?["hci0"]?["in_use"]?.int64Value == 0)
        #expect(health["slots"]?["hci0"]?["max"]?.int64Value == 3)
        #expect(h.central.maxLinksPerAddress == 1)
    }

    @Test("the adapter holding the link is powered off: the device comes back through the other, never two links; it is left off")
    func powerOffMovesTheDevice() async throws {
        let h = try Self.harness()
        let on0 = BlueZ.devicePath(adapter: FakeCentral.adapter, address: Self.address)
        try await h.run {
            try await h.eventually("online through hci1") { h.broker.last("ble/echo/availability") == "online" }
            h.central.powerOff(Self.hci1)
            try await h.eventually("connected through hci0") { h.central.calls("Connect").contains { $0.path == on0 } }
            try await h.eventually("online again") {
                h.broker.last("ble/echo/availability") == "online" && h.broker.last("ble/bridge/devices")?.contains("\"hci0\"") == true
            }
        }
        #expect(h.central.maxLinksPerAddress == 1)
        #expect(h.broker.texts("ble/echo/availability").contains("offline"), "the move is seen as offline, then online")
        // Someone turned hci1 off while hci0 serves: the bridge leaves it off.
        #expect(h.central.calls("Set").isEmpty, "\(h.central.calls("Set"))")
    }
}
