import BlueZ
import Testing

@testable import Bridge

/// Notifications through `AcquireNotify` sockets, and `StartNotify` where BlueZ refuses them,
/// where the characteristic only indicates, or where the configuration says so.
@Suite struct AcquireNotifyTests {
    static let address = "C8:12:34:56:78:9A"
    static let yaml = RuntimeHarness.base + """

        bluetooth: { services: ["180d"] }
        """

    /// Heart rate (notify), battery (read, notify), an indicate-only characteristic.
    static func strap(_ h: RuntimeHarness) -> String {
        h.central.addDevice(address, name: "Strap", services: [
            "180d": [("2a37", ["notify"], [])],
            "180f": [("2a19", ["read", "notify"], [90])],
            "1809": [("2a1c", ["indicate"], [])],
        ])
    }

    static func methods(_ h: RuntimeHarness, _ names: Set<String>) -> [String] {
        h.central.calls.filter { names.contains($0.method) }.map(\.description)
    }

    @Test("notify characteristics are acquired, the indicate-only one is started; values flow; stop closes the sockets")
    func acquired() async throws {
        let h = try RuntimeHarness(Self.yaml)
        h.central.acquireSupported = true
        let dev = Self.strap(h)
        let hr = h.central.characteristicPath(device: dev, "2a37")
        let battery = h.central.characteristicPath(device: dev, "2a19")
        let thermometer = h.central.characteristicPath(device: dev, "2a1c")
        try await h.run {
            try await h.eventually("subscribed") { h.central.acquired.count == 2 && !h.central.calls("StartNotify").isEmpty }
            try await h.eventually("online") { h.broker.last("ble/c8123456789a/availability") == "online" }
            h.central.notify(hr, [0x00, 0x48])
            try await h.eventually("the value") { !h.broker.texts("ble/c8123456789a/180d/2a37").isEmpty }
        }
        #expect(h.central.acquired == [], "every socket closed at stop")
        #expect(h.central.calls("AcquireNotify").map(\.path).sorted() == [hr, battery].sorted())
        #expect(h.central.calls("StartNotify").map(\.path) == [thermometer], "only the indicate-only characteristic")
        #expect(h.central.calls("ReleaseNotify").map(\.path).sorted() == [hr, battery].sorted())
        #expect(h.central.calls("StopNotify").map(\.path) == [thermometer])
        #expect(h.broker.texts("ble/c8123456789a/180d/2a37").first?.contains(#""raw":"0048""#) == true)
    }

    @Test("AcquireNotify refused: StartNotify for the same characteristic, values flow as signals")
    func fallback() async throws {
        let h = try RuntimeHarness(Self.yaml)
        let dev = Self.strap(h)
        let hr = h.central.characteristicPath(device: dev, "2a37")
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/c8123456789a/availability") == "online" }
            h.central.notify(hr, [0x00, 0x50])
            try await h.eventually("the value") { !h.broker.texts("ble/c8123456789a/180d/2a37").isEmpty }
        }
        let order = Self.methods(h, ["AcquireNotify", "StartNotify"])
        #expect(order.firstIndex(of: "AcquireNotify \(hr)")! < order.firstIndex(of: "StartNotify \(hr)")!, "\(order)")
        #expect(h.central.calls("StartNotify").count == 3, "all three started")
        #expect(h.central.calls("ReleaseNotify").isEmpty)
        #expect(h.central.calls("StopNotify").count == 3)
    }

    @Test("acquire_notify: false never calls AcquireNotify")
    func disabled() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["180d"], acquire_notify: false }
            """)
        h.central.acquireSupported = true
        _ = Self.strap(h)
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/c8123456789a/availability") == "online" }
        }
        #expect(h.central.calls("AcquireNotify").isEmpty)
        #expect(h.central.calls("StartNotify").count == 3)
    }

    @Test("a socket that hangs up while the link stays is acquired again a second later")
    func hangUpWhileConnected() async throws {
        let h = try RuntimeHarness(Self.yaml)
        h.central.acquireSupported = true
        let dev = Self.strap(h)
        let hr = h.central.characteristicPath(device: dev, "2a37")
        try await h.run {
            try await h.eventually("subscribed") { h.central.acquired.count == 2 }
            try await h.eventually("online") { h.broker.last("ble/c8123456789a/availability") == "online" }
            let hungUpAt = h.clock.now
            h.central.hangUp(hr)
            try await h.eventually("acquired again") { h.central.calls("AcquireNotify").filter { $0.path == hr }.count == 2 }
            let again = try #require(h.central.calls("AcquireNotify").last).at
            let gap = hungUpAt.duration(to: again)
            #expect(gap == .seconds(1), "acquired again after \(gap)")
            #expect(h.central.acquired.contains(hr))
        }
    }

    @Test("a link loss hangs the sockets up; the reconnect acquires each once")
    func linkLoss() async throws {
        let h = try RuntimeHarness(Self.yaml)
        h.central.acquireSupported = true
        let dev = Self.strap(h)
        let hr = h.central.characteristicPath(device: dev, "2a37")
        try await h.run {
            try await h.eventually("subscribed") { h.central.acquired.count == 2 }
            h.central.dropLink(dev)
            try await h.eventually("reconnected and acquired again") {
                h.central.calls("Connect").count == 2 && h.central.acquired.count == 2
            }
            try await h.advance(.seconds(3))
        }
        #expect(h.central.calls("AcquireNotify").filter { $0.path == hr }.count == 2, "once per connection")
    }
}
