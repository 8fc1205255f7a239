import BlueZ
import Testing

@testable import Bridge

/// One GATT operation queue per peripheral: setup, polls and commands in order, one at a time,
/// completions of an earlier connection dropped.
@Suite struct GattQueueTests {
    static let address = "C8:12:34:56:78:9A"
    static let yaml = RuntimeHarness.base + """

        bluetooth: { services: ["180d"] }
        commands: { timeout: 60s }
        devices:
          - match: { address: "C8:12:34:56:78:9A" }
            name: strap
            characteristics:
              - { uuid: "2a19", poll: 1s }
        """

    /// Heart rate (notify), battery (read, notify) and body sensor location (read).
    static func strap(_ h: RuntimeHarness) -> String {
        h.central.addDevice(address, name: "Strap", services: [
            "180d": [("2a37", ["notify"], []), ("2a38", ["read"], [1])],
            "180f": [("2a19", ["read", "notify"], [90])],
        ])
    }

    @Test("setup, a poll and a /get on one device never overlap, and run in queue order")
    func orderOnOneDevice() async throws {
        let h = try RuntimeHarness(Self.yaml)
        let dev = Self.strap(h)
        let battery = h.central.characteristicPath(device: dev, "2a19")
        let location = h.central.characteristicPath(device: dev, "2a38")
        // Hold the first initial read so that the poll and a /get queue up behind setup.
        h.central.hold("ReadValue", location)
        try await h.run {
            try await h.eventually("the held initial read") { h.central.heldCount == 1 }
            h.command("ble/strap/180f/2a19/get", #"{"transaction": "g1"}"#)
            try await h.advance(.milliseconds(1500))  // the 1 s poll of 2a19 is not due before ready
            #expect(h.central.calls("ReadValue").count == 1, "nothing runs beside the held read")
            h.central.release("ReadValue", location, value: [2])
            try await h.eventually("the /get answered") { h.broker.last("ble/strap/180f/2a19/result") != nil }
            try await h.eventually("a poll of 2a19") { h.central.calls("ReadValue").filter { $0.path == battery }.count >= 3 }
        }
        #expect(h.central.maxGattInFlight(dev) == 1, "one GATT operation at a time")
        let order = h.central.calls.filter { ["StartNotify", "ReadValue"].contains($0.method) }.map(\.description)
        // Subscriptions first (in object order), then the initial reads, then the /get, then polls.
        let notifies = order.prefix { $0.hasPrefix("StartNotify") }
        #expect(notifies.count == 2)
        let reads = order.dropFirst(notifies.count)
        #expect(Array(reads.prefix(2)) == ["ReadValue \(location)", "ReadValue \(battery)"])
        #expect(reads.dropFirst(2).first == "ReadValue \(battery)", "the /get after the setup")
        #expect(h.broker.last("ble/strap/180f/2a19/result")?.contains(#""status":"ok""#) == true)
        #expect(h.broker.texts("ble/strap/180d/2a38").first?.contains(#""raw":"02""#) == true)
    }

    @Test("a read of an earlier connection that completes after the reconnect is dropped")
    func staleCompletionAfterReconnect() async throws {
        let h = try RuntimeHarness(Self.yaml)
        let dev = Self.strap(h)
        let location = h.central.characteristicPath(device: dev, "2a38")
        h.central.hold("ReadValue", location)
        try await h.run {
            try await h.eventually("the held read of the first connection") { h.central.heldCount == 1 }
            h.central.dropLink(dev)
            try await h.eventually("a second Connect") { h.central.calls("Connect").count == 2 }
            // The first connection's read now completes with a value the device no longer has.
            h.central.setValue(location, [3])
            h.central.release("ReadValue", location, value: [9])
            try await h.eventually("the second connection's read") { !h.broker.texts("ble/strap/180d/2a38").isEmpty }
            try await h.eventually("online again") { h.broker.last("ble/strap/availability") == "online" }
        }
        let values = h.broker.texts("ble/strap/180d/2a38")
        #expect(values.allSatisfy { !$0.contains(#""raw":"09""#) }, "stale value published: \(values)")
        #expect(values.first?.contains(#""raw":"03""#) == true)
    }

    @Test("commands still queued at their deadline are answered and never sent")
    func commandsKeepTheirDeadline() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            commands: { timeout: 2s }
            devices:
              - match: { address: "C8:12:34:56:78:9A" }
                name: echo
            """)
        let dev = h.central.addDevice(Self.address, name: "Echo", services: [
            "ffe0": [("ffe1", ["read", "write"], [0])],
        ])
        let target = h.central.characteristicPath(device: dev, "ffe1")
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/echo/availability") == "online" }
            h.central.hold("WriteValue", target)
            for i in 0..<6 { h.command("ble/echo/ffe0/ffe1/set", #"{"raw": "0\#(i)", "transaction": \#(i)}"#) }
            // The runtime settles at each step: the results come at the 2 s deadline, not before.
            try await h.advance(.milliseconds(1999))
            #expect(h.broker.texts("ble/echo/ffe0/ffe1/result").isEmpty, "none before the deadline")
            try await h.advance(.milliseconds(1))
            #expect(h.broker.texts("ble/echo/ffe0/ffe1/result").count == 6, "every result at the deadline")
            // The device answers the first write long after: nothing else is sent then.
            h.central.release("WriteValue", target)
            try await h.advance(.seconds(5))
        }
        let results = h.broker.texts("ble/echo/ffe0/ffe1/result")
        #expect(results.count == 6)
        #expect(results.allSatisfy { $0.contains(#""code":"timeout""#) }, "\(results)")
        let writes = h.central.calls("WriteValue")
        #expect(writes.count == 1, "only the first write was sent: \(writes)")
        #expect(writes.first?.bytes == [0])
    }

    @Test("a command for a device that does not come back is answered not_connected, and not sent later")
    func notConnectedAtDeadline() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            commands: { timeout: 2s }
            devices:
              - match: { address: "C8:12:34:56:78:9A" }
                name: echo
            """)
        let dev = h.central.addDevice(Self.address, name: "Echo", services: ["ffe0": [("ffe1", ["read", "write"], [0])]])
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/echo/availability") == "online" }
            h.central.failNext("Connect", dev, BlueZError(code: .failed, name: "org.bluez.Error.Failed", message: "Page Timeout"))
            h.central.failNext("Connect", dev, BlueZError(code: .failed, name: "org.bluez.Error.Failed", message: "Page Timeout"))
            h.central.dropLink(dev)
            try await h.eventually("offline") { h.broker.last("ble/echo/availability") == "offline" }
            h.command("ble/echo/ffe0/ffe1/set", #"{"raw": "aa", "transaction": 1}"#)
            try await h.eventually("the result") { h.broker.last("ble/echo/ffe0/ffe1/result") != nil }
            try await h.eventually("online again") { h.broker.last("ble/echo/availability") == "online" }
            try await h.advance(.seconds(3))
        }
        #expect(h.broker.last("ble/echo/ffe0/ffe1/result")?.contains(#""code":"not_connected""#) == true)
        #expect(h.central.calls("WriteValue").isEmpty)
    }
}
