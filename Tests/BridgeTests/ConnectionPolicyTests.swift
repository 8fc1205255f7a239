import BlueZ
import Testing

@testable import Bridge

/// SPEC §6 over the fakes: poll cycles, on-demand connections, connection slots.
@Suite struct ConnectionPolicyTests {
    static func thermometer(_ h: RuntimeHarness, _ address: String) -> String {
        h.central.addDevice(address, name: "Thermo", services: [
            "181a": [("2a6e", ["read", "notify"], [0x34, 0x08]), ("2a6f", ["read"], [0x10, 0x17])],
        ])
    }

    @Test("a poll device connects, reads, disconnects and repeats every poll_interval; online between cycles")
    func pollCycle() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            devices:
              - match: { address: "E4:5F:01:AB:CD:EF" }
                name: thermo
                connection: poll
                poll_interval: 10s
            """)
        let dev = Self.thermometer(h, "E4:5F:01:AB:CD:EF")
        try await h.run {
            try await h.eventually("two cycles") { h.central.calls("Disconnect").count >= 2 }
            #expect(h.central.links == 0, "disconnected between cycles")
            #expect(h.broker.last("ble/thermo/availability") == "online")
            try await h.eventually("a third cycle") { h.central.calls("Connect").count >= 3 }
        }
        let connects = h.central.calls("Connect").map(\.at)
        #expect(connects.count >= 3)
        // Counted from the start of the previous cycle.
        for (a, b) in zip(connects, connects.dropFirst()) {
            let gap = a.duration(to: b)
            #expect(gap == .seconds(10), "cycle gap \(gap) in \(connects)")
        }
        // Each cycle reads each readable characteristic once and does not subscribe (listen 0).
        #expect(h.central.calls("StartNotify").isEmpty)
        #expect(h.central.calls("ReadValue").count >= 4)
        #expect(h.broker.texts("ble/thermo/181a/2a6e").count >= 2)
        #expect(h.broker.all.contains { $0.message.topic == "ble/bridge/devices" && $0.text.contains(#""connection":"poll""#) })
        _ = dev
    }

    @Test("with listen, a poll cycle subscribes and stays connected that long")
    func pollListens() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            devices:
              - match: { address: "E4:5F:01:AB:CD:EF" }
                name: thermo
                connection: poll
                poll_interval: 30s
                listen: 5s
            """)
        let dev = Self.thermometer(h, "E4:5F:01:AB:CD:EF")
        let temperature = h.central.characteristicPath(device: dev, "2a6e")
        try await h.run {
            try await h.eventually("subscribed") { !h.central.calls("StartNotify").isEmpty }
            h.central.notify(temperature, [0x35, 0x08])
            try await h.eventually("the disconnect after listening") { !h.central.calls("Disconnect").isEmpty }
            // From the last read of the cycle (the fake's clock at each call) to the disconnect.
            let lastRead = try #require(h.central.calls("ReadValue").last).at
            let listened = lastRead.duration(to: h.central.calls("Disconnect")[0].at)
            #expect(listened == .seconds(5), "listened \(listened)")
        }
        #expect(h.broker.texts("ble/thermo/181a/2a6e").contains { $0.contains(#""raw":"3508""#) })
    }

    @Test("a poll device whose connection fails every time ends its cycle offline and tries again next cycle")
    func pollFailure() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            devices:
              - match: { address: "E4:5F:01:AB:CD:EF" }
                name: thermo
                connection: poll
                poll_interval: 60s
            """)
        let dev = Self.thermometer(h, "E4:5F:01:AB:CD:EF")
        for _ in 0..<3 {
            h.central.failNext("Connect", dev, BlueZError(code: .failed, name: "org.bluez.Error.Failed", message: "Page Timeout"))
        }
        try await h.run {
            try await h.eventually("three failed attempts") { h.central.calls("Connect").count == 3 }
            try await h.advance(.seconds(10))
            #expect(h.central.calls("Connect").count == 3, "no more attempts in this cycle")
            #expect(h.broker.last("ble/thermo/availability") == "offline")
            try await h.eventually("the next cycle, online") { h.broker.last("ble/thermo/availability") == "online" }
        }
        #expect(h.central.calls("Connect").count == 4)
    }

    @Test("a command for a poll device between cycles connects on demand, runs, and disconnects again")
    func onDemand() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            commands: { timeout: 5s }
            devices:
              - match: { address: "E4:5F:01:AB:CD:EF" }
                name: thermo
                connection: poll
                poll_interval: 1h
            """)
        _ = Self.thermometer(h, "E4:5F:01:AB:CD:EF")
        try await h.run {
            try await h.eventually("the first cycle done") { h.central.calls("Disconnect").count == 1 && h.central.links == 0 }
            let readsBefore = h.central.calls("ReadValue").count
            h.command("ble/thermo/181a/2a6f/get", #"{"transaction": 7}"#)
            try await h.eventually("the result") { h.broker.last("ble/thermo/181a/2a6f/result") != nil }
            try await h.eventually("disconnected again") { h.central.calls("Disconnect").count == 2 && h.central.links == 0 }
            // On demand: only the command's read, no cycle reads.
            #expect(h.central.calls("ReadValue").count == readsBefore + 1)
        }
        #expect(h.broker.last("ble/thermo/181a/2a6f/result")?.contains(#""status":"ok""#) == true)
        #expect(h.central.calls("Connect").count == 2)
    }

    @Test("max_connections: never more links than slots; always devices keep theirs, poll devices take turns")
    func slots() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { max_connections: 2 }
            devices:
              - match: { address: "C8:12:34:56:78:9A" }
                name: strap
              - match: { address: "E4:5F:01:AB:CD:01" }
                name: t1
                connection: poll
                poll_interval: 10s
              - match: { address: "E4:5F:01:AB:CD:02" }
                name: t2
                connection: poll
                poll_interval: 10s
            """)
        h.central.addDevice("C8:12:34:56:78:9A", name: "Strap", services: ["180d": [("2a37", ["notify"], [])]])
        _ = Self.thermometer(h, "E4:5F:01:AB:CD:01")
        _ = Self.thermometer(h, "E4:5F:01:AB:CD:02")
        try await h.run {
            try await h.eventually("both poll devices cycled twice") {
                h.broker.texts("ble/t1/181a/2a6e").count >= 2 && h.broker.texts("ble/t2/181a/2a6e").count >= 2
            }
            #expect(h.broker.last("ble/strap/availability") == "online")
        }
        #expect(h.central.maxLinks == 2, "links at once: \(h.central.maxLinks)")
        // The strap connected once and kept its slot.
        #expect(h.central.calls("Connect").filter { $0.path.hasSuffix("C8_12_34_56_78_9A") }.count == 1)
    }

    @Test("max_connections 1: the second always device waits until the first one's link is gone")
    func oneSlot() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { max_connections: 1 }
            devices:
              - match: { address: "C8:12:34:56:78:9A" }
                name: a
              - match: { address: "C8:12:34:56:78:9B" }
                name: b
            """)
        let a = h.central.addDevice("C8:12:34:56:78:9A", name: "A", services: ["180d": [("2a37", ["notify"], [])]])
        let b = h.central.addDevice("C8:12:34:56:78:9B", name: "B", services: ["180d": [("2a37", ["notify"], [])]])
        try await h.run {
            try await h.eventually("one online") {
                h.broker.last("ble/a/availability") == "online" || h.broker.last("ble/b/availability") == "online"
            }
            try await h.advance(.seconds(5))
            #expect(h.central.maxLinks == 1)
            let first = h.broker.last("ble/a/availability") == "online" ? a : b
            let second = first == a ? "b" : "a"
            // The first loses its link: the waiting one gets the slot.
            h.central.failNext("Connect", first, BlueZError(code: .failed, name: "org.bluez.Error.Failed", message: "Page Timeout"))
            h.central.dropLink(first)
            try await h.eventually("the other online") { h.broker.last("ble/\(second)/availability") == "online" }
        }
        #expect(h.central.maxLinks == 1)
    }
}
