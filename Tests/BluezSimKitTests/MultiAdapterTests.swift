import BridgeBase
import DBusKit
import Testing

@testable import BluezSimKit

/// Several adapters in one simulator: a peripheral heard by several adapters is one device object
/// under each, with that adapter's RSSI; an adapter that does not hear it never shows it.
@Suite(.serialized) struct MultiAdapterTests {
    static let both = "C0:00:00:00:00:01"
    static let onlyHci0 = "C0:00:00:00:00:02"
    static let everywhere = "C0:00:00:00:00:03"

    /// Two adapters; fast advertisements and links.
    static let scenario = """
        settings: { advertise_delay: 10ms, advertise_jitter: 0ms, rssi_interval: 40ms, connect_delay: 20ms,
                    resolve_delay: 20ms, resolve_delay_cached: 10ms, gatt_objects_first: true, gatt_export_time: 0ms,
                    disconnect_delay: 20ms, connect_timeout: 600ms }
        adapters:
          - { name: hci0, address: "00:1A:7D:DA:71:10" }
          - { name: hci1, address: "00:1A:7D:DA:71:11" }
        devices:
          - name: Both
            address: "C0:00:00:00:00:01"
            rssi: { hci0: -60, hci1: -90 }
            services:
              - uuid: "180f"
                characteristics:
                  - { uuid: "2a19", flags: [read, write, notify], value: "5a" }
          - { name: OnlyHci0, address: "C0:00:00:00:00:02", rssi: { hci0: -50 } }
          - { name: Everywhere, address: "C0:00:00:00:00:03", rssi: { hci1: -40, default: -70 } }
        """

    @Test("rssi per adapter, a default, an adapter list: one spec per adapter that hears the device")
    func placements() throws {
        let s = try ScenarioLoader.parse(Self.scenario)
        let placed = s.devices.map { "\($0.address) \($0.adapter) \($0.rssi)" }
        #expect(placed == [
            "C0:00:00:00:00:01 hci0 -60", "C0:00:00:00:00:01 hci1 -90",
            "C0:00:00:00:00:02 hci0 -50",
            "C0:00:00:00:00:03 hci0 -70", "C0:00:00:00:00:03 hci1 -40",
        ])
        let listed = try ScenarioLoader.parse("""
            adapters: [{ name: hci0 }, { name: hci1 }, { name: hci2 }]
            devices:
              - { address: "C0:00:00:00:00:09", adapter: [hci2, hci0], rssi: -55, count: 2 }
              - { address: "C0:00:00:00:00:20", adapter: [hci1], rssi: { hci1: -77 } }
              - { address: "C0:00:00:00:00:30" }
            """)
        #expect(listed.devices.map { "\($0.address) \($0.adapter) \($0.rssi)" } == [
            "C0:00:00:00:00:09 hci2 -55", "C0:00:00:00:00:09 hci0 -55",
            "C0:00:00:00:00:0A hci2 -55", "C0:00:00:00:00:0A hci0 -55",
            "C0:00:00:00:00:20 hci1 -77", "C0:00:00:00:00:30 hci0 -60",
        ])
        let two = "adapters: [{ name: hci0 }, { name: hci1 }]\n"
        for (bad, message) in [
            ("devices: [{ address: \"C0:00:00:00:00:01\", rssi: { hci7: -50 } }]", "unknown adapter hci7"),
            ("devices: [{ address: \"C0:00:00:00:00:01\", adapter: [hci0, hci1], rssi: { hci0: -50 } }]", "no RSSI for adapter hci1"),
            ("devices: [{ address: \"C0:00:00:00:00:01\", adapter: hci0, rssi: { hci1: -50 } }]", "not in the device's adapter list"),
            ("devices: [{ address: \"C0:00:00:00:00:01\", adapter: [hci0, hci0] }]", "adapter listed twice"),
        ] {
            do {
                _ = try ScenarioLoader.parse(two + bad)
                Issue.record("accepted: \(bad)")
            } catch {
                #expect(error.description.contains(message), "\(error.description)")
            }
        }
    }

    @Test("each adapter discovers on its own: the device objects under each, each with its own RSSI; never under a deaf adapter")
    func deviceObjectsPerAdapter() async throws {
        try await SimHarness.run(Self.scenario) { h in
            let bothAt1 = h.devicePath(Self.both, adapter: "hci1")
            let everywhereAt1 = h.devicePath(Self.everywhere, adapter: "hci1")
            let recorder = PropertyRecorder(h.client, path: everywhereAt1)
            // Only hci1 discovers first: nothing appears under hci0.
            try await h.call(BlueZNames.adapterPath("hci1"), BlueZNames.adapter, "StartDiscovery")
            try await eventually("Both and Everywhere under hci1") {
                let paths = try await objectPaths(h)
                return paths.contains(bothAt1) && paths.contains(everywhereAt1)
            }
            // Several advertisements of Everywhere at hci1 later, OnlyHci0 is still absent there.
            try await eventually("advertisements of Everywhere at hci1") { recorder.values("RSSI").count >= 4 }
            var paths = try await objectPaths(h)
            #expect(!paths.contains(h.devicePath(Self.onlyHci0, adapter: "hci1")))
            #expect(!paths.contains { $0.hasPrefix("/org/bluez/hci0/dev_") })
            try await h.call(BlueZNames.adapterPath("hci0"), BlueZNames.adapter, "StartDiscovery")
            try await eventually("the three devices under hci0") {
                let p = try await objectPaths(h)
                return [Self.both, Self.onlyHci0, Self.everywhere].allSatisfy { p.contains(h.devicePath($0)) }
            }
            paths = try await objectPaths(h)
            #expect(!paths.contains(h.devicePath(Self.onlyHci0, adapter: "hci1")))
            // The random walk stays within 8 dB of each adapter's mean.
            let at0 = try #require(try await h.property(h.devicePath(Self.both), BlueZNames.device, "RSSI").int)
            let at1 = try #require(try await h.property(bothAt1, BlueZNames.device, "RSSI").int)
            #expect((-68 ... -52).contains(at0))
            #expect((-98 ... -82).contains(at1))
            #expect(try await h.property(bothAt1, BlueZNames.device, "Adapter") == .objectPath("/org/bluez/hci1"))
        }
    }

    @Test("SetRSSI changes what one adapter reports at run time, and only there")
    func rssiChangesAtRunTime() async throws {
        try await SimHarness.run(Self.scenario, control: true) { h in
            let at0 = h.devicePath(Self.both), at1 = h.devicePath(Self.both, adapter: "hci1")
            let recorder0 = PropertyRecorder(h.client, path: at0)
            let recorder1 = PropertyRecorder(h.client, path: at1)
            try await discoverOnBoth(h, [at0, at1])
            try await h.control("SetRSSI", [.string(Self.both), .string("hci1"), .int16(-30)])
            let mark = recorder1.values("RSSI").count
            try await eventually("hci1 reports Both near -30") {
                recorder1.values("RSSI").dropFirst(mark).contains { ($0.int ?? -127) >= -38 }
            }
            #expect(recorder1.values("RSSI").dropFirst(mark + 1).allSatisfy { (-38 ... -22).contains($0.int ?? 0) })
            let at1Now = try #require(try await h.property(at1, BlueZNames.device, "RSSI").int)
            #expect((-38 ... -22).contains(at1Now))
            // hci0 still hears it around -60.
            let mark0 = recorder0.values("RSSI").count
            try await eventually("more advertisements at hci0") { recorder0.values("RSSI").count >= mark0 + 3 }
            #expect(recorder0.values("RSSI").allSatisfy { (-68 ... -52).contains($0.int ?? 0) })
            let stats = await h.stats(Self.both)
            #expect(stats["adapter"] == .string("hci0"))
            // Errors: an adapter that does not hear the device; a value out of range.
            await #expect(throws: DBusError.self) {
                try await h.control("SetRSSI", [.string(Self.onlyHci0), .string("hci1"), .int16(-40)])
            }
            await #expect(throws: DBusError.self) {
                try await h.control("SetRSSI", [.string(Self.both), .string(""), .int16(-300)])
            }
        }
    }

    @Test("an adapter powered off drops its links and keeps its device objects (as one adapter does); the peripheral is then free for the other adapter")
    func powerOffDropsLinks() async throws {
        try await SimHarness.run(Self.scenario, control: true) { h in
            let at0 = h.devicePath(Self.both), at1 = h.devicePath(Self.both, adapter: "hci1")
            try await discoverOnBoth(h, [at0, at1])
            try await h.call(at1, BlueZNames.device, "Connect")
            #expect(try await h.property(at1, BlueZNames.device, "Connected") == .bool(true))
            var all = await h.simulator.statistics()
            #expect(all["links"]?.stringDict?[Self.both]?.string == "hci1")
            #expect(adapterStat(all, "hci1", "connects")?.int == 1)
            #expect(adapterStat(all, "hci0", "connects")?.int == 0)
            let recorder = PropertyRecorder(h.client, path: at1)
            try await h.control("SetAdapterPowered", [.string("hci1"), .bool(false)])
            try await recorder.wait(for: "Connected", .bool(false))
            #expect(try await h.property(BlueZNames.adapterPath("hci1"), BlueZNames.adapter, "Powered") == .bool(false))
            #expect(try await objectPaths(h).contains(at1))
            #expect(try await h.property(at0, BlueZNames.device, "Connected") == .bool(false))
            // The link is free: hci0 connects the peripheral at once.
            try await h.call(at0, BlueZNames.device, "Connect")
            all = await h.simulator.statistics()
            #expect(all["links"]?.stringDict?[Self.both]?.string == "hci0")
            #expect(adapterStat(all, "hci0", "connects")?.int == 1)
            #expect(adapterStat(all, "hci1", "link_losses")?.int == 1)
            await #expect(throws: DBusError.self) { try await h.call(at1, BlueZNames.device, "Connect") }
        }
    }
}

extension MultiAdapterTests {
    @Test("SetInRangeAt: out of one adapter's range, the link through it drops and the other adapter still hears and connects it")
    func outOfOneAdaptersRange() async throws {
        try await SimHarness.run(Self.scenario, control: true) { h in
            let at0 = h.devicePath(Self.both), at1 = h.devicePath(Self.both, adapter: "hci1")
            try await discoverOnBoth(h, [at0, at1])
            try await h.call(at0, BlueZNames.device, "Connect")
            let recorder0 = PropertyRecorder(h.client, path: at0)
            let recorder1 = PropertyRecorder(h.client, path: at1)
            try await h.control("SetInRangeAt", [.string(Self.both), .string("hci0"), .bool(false)])
            try await recorder0.wait(for: "Connected", .bool(false))
            let mark0 = recorder0.values("RSSI").count
            try await eventually("hci1 still hears it") { recorder1.values("RSSI").count >= 4 }
            // (The link-loss signal carries one RSSI.)
            #expect(recorder0.values("RSSI").count <= mark0)
            try await h.call(at1, BlueZNames.device, "Connect")
            await #expect(throws: LinkSharingTests.notAnswering) { try await h.call(at0, BlueZNames.device, "Connect") }
            #expect(await h.simulator.statistics()["links"]?.stringDict?[Self.both]?.string == "hci1")
            await #expect(throws: DBusError.self) {
                try await h.control("SetInRangeAt", [.string(Self.onlyHci0), .string("hci1"), .bool(false)])
            }
        }
    }
}

/// The object paths `GetManagedObjects` lists.
/// Starts discovery on hci0 and hci1 and waits until every path in `paths` is exported.
func discoverOnBoth(_ h: SimHarness, _ paths: [String]) async throws {
    for name in ["hci0", "hci1"] {
        try await h.call(BlueZNames.adapterPath(name), BlueZNames.adapter, "StartDiscovery")
    }
    try await eventually("\(paths) exported") {
        let exported = try await objectPaths(h)
        return paths.allSatisfy(exported.contains)
    }
}

func objectPaths(_ h: SimHarness) async throws -> Set<String> {
    let reply = try await h.client.call(destination: BlueZNames.service, path: "/",
                                        interface: "org.freedesktop.DBus.ObjectManager", method: "GetManagedObjects")
    guard case .dictionary(_, _, let objects)? = reply.first else { throw TestFailure("no managed objects") }
    return Set(objects.compactMap { $0.key.string })
}

/// `GetStats` → `adapters` → `adapter` → `name`.
func adapterStat(_ stats: [String: DBusValue], _ adapter: String, _ name: String) -> DBusValue? {
    stats["adapters"]?.stringDict?[adapter]?.unwrapped.stringDict?[name]?.unwrapped
}
