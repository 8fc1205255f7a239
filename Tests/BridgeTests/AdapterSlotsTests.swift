import BridgeBase
import BlueZ
import BridgeCore
import MQTT
import Testing

@testable import Bridge

/// Slots per adapter (SPEC §10) and the adapter named in `bridge/devices` and health.
@Suite struct AdapterSlotsTests {
    @Test("each adapter has max_connections slots of its own, granted in arrival order per adapter")
    func slotsPerAdapter() {
        let pool = SlotPool(capacity: 1)
        // Only grants are sent to these inboxes: their counts are the grants.
        let a = Mailbox<SessionInput>(), b = Mailbox<SessionInput>(), c = Mailbox<SessionInput>()
        pool.request("/org/bluez/hci0/dev_AA_AA_AA_AA_AA_01", mailbox: a)
        pool.request("/org/bluez/hci1/dev_AA_AA_AA_AA_AA_02", mailbox: b)
        pool.request("/org/bluez/hci0/dev_AA_AA_AA_AA_AA_03", mailbox: c)
        #expect(a.count == 1)
        #expect(b.count == 1, "hci1's slot is its own")
        #expect(c.count == 0, "hci0 is full")
        #expect(pool.inUse == 2)
        #expect(pool.waiting == ["/org/bluez/hci0/dev_AA_AA_AA_AA_AA_03"])
        #expect(pool.free(on: "hci0") == 0)
        #expect(pool.free(on: "hci1") == 0)
        #expect(pool.free(on: "hci2") == 1)
        #expect(pool.usage(adapters: ["hci0", "hci2"]) == [
            "hci0": SlotPool.Usage(max: 1, inUse: 1, waiting: 1), "hci1": SlotPool.Usage(max: 1, inUse: 1, waiting: 0),
            "hci2": SlotPool.Usage(max: 1, inUse: 0, waiting: 0),
        ])
        // A slot freed on hci1 grants nothing on hci0; one freed on hci0 goes to its waiter.
        pool.release("/org/bluez/hci1/dev_AA_AA_AA_AA_AA_02")
        #expect(c.count == 0)
        pool.release("/org/bluez/hci0/dev_AA_AA_AA_AA_AA_01")
        #expect(c.count == 1)
        #expect(pool.waiting.isEmpty)
    }

    @Test func adapterOfAPath() {
        #expect(BlueZNames.adapterName(of: "/org/bluez/hci1/dev_AA_BB_CC_DD_EE_FF") == "hci1")
        #expect(BlueZNames.adapterName(of: "/org/bluez/hci0") == "hci0")
        #expect(BlueZNames.adapterName(of: "/elsewhere/x") == "/elsewhere/x")
    }

    @Test("bridge/devices and health name each device's adapter; health has a per-adapter slots object")
    func adapterInDevicesAndHealth() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { adapters: [hci0], max_connections: 3 }
            health: { interval: 5s }
            devices:
              - match: { address: "D0:5A:00:00:EC:01" }
                name: echo
            """)
        _ = CommandPolicyAndHealthTests.echo(h)
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/echo/availability") == "online" }
            try await h.eventually("a health report") { !h.broker.texts("ble/bridge/health").isEmpty }
            h.runtime.intake.handle(MQTTMessage(
                topic: "ble/bridge/request/health_check", payload: Array("{}".utf8), qos: 1,
                retain: false, responseTopic: nil, correlationData: nil))
            try await h.eventually("the health_check answer") { h.broker.last("ble/bridge/response/health_check") != nil }
        }
        let devices = try JSONParser.parse(Array((h.broker.last("ble/bridge/devices") ?? "").utf8))
        #expect(devices.arrayValue?.first?["adapter"]?.stringValue == "hci0")
        for text in [h.broker.texts("ble/bridge/health").last ?? "", h.broker.last("ble/bridge/response/health_check") ?? ""] {
            let health = try JSONParser.parse(Array(text.utf8))
            #expect(health["devices"]?["echo"]?["adapter"]?.stringValue == "hci0", "\(text)")
            #expect(health["slots"]?["hci0"]?["max"]?.int64Value == 3, "\(text)")
            #expect(health["slots"]?["hci0"]?["in_use"]?.int64Value == 1, "\(text)")
            #expect(health["slots"]?["hci0"]?["waiting"]?.int64Value == 0, "\(text)")
            // The existing object stays.
            #expect(health["connection_slots"]?["max"]?.int64Value == 3, "\(text)")
            #expect(health["connection_slots"]?["in_use"]?.int64Value == 1, "\(text)")
        }
    }
}
