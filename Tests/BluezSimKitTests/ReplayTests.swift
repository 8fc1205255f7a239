import BridgeBase
import DBusKit
import Testing

@testable import BluezSimKit

/// `replay`: a device advertises captured frames (service data, manufacturer data, name, UUIDs) in
/// turn at its `advertising_interval`, as BlueZ shows them: one `PropertiesChanged` per report with
/// the data it carried and its RSSI, entries of other UUIDs or company ids kept (with `DuplicateData`:
/// of the other kind of data only), UUIDs adding up.
@Suite(.serialized) struct ReplayTests {
    static let address = "A4:C1:38:00:00:01"
    // Two frames in the MiBeacon layout and one in Govee's, with its name and advertised UUID (the
    // simulator does not look inside: any bytes do).
    static let miBeaconA: [UInt8] = try! Hex.decode("5858020a9b6e4d26cb28b5a3e7cd4f0400000087a78c5b")
    static let govee: [UInt8] = try! Hex.decode("00038f5e5600")
    static let miBeaconB: [UInt8] = try! Hex.decode("5030e1009b6e4d26cb28b5")

    static let scenario = """
        settings: { advertise_delay: 10ms, advertise_jitter: 0ms, rssi_interval: 1s }
        devices:
          - name: LYWSD03MMC
            address: "\(address)"
            advertising_interval: 50ms
            advertise: []
            replay:
              - { service_data: { fe95: "\(Hex.encode(miBeaconA))" } }
              - { manufacturer_data: { 0xec88: "\(Hex.encode(govee))" }, name: GVH5075_ABCD, uuids: [ec88] }
              - { service_data: { fe95: "\(Hex.encode(miBeaconB))" } }
          - { name: Quiet, address: "C0:FF:EE:00:00:09", advertise: [] }
        """

    static func full(_ short: String) -> String { BluetoothUUID.normalize(short)! }

    /// `ServiceData` as `[uuid: bytes]`.
    static func serviceData(_ v: DBusValue?) -> [String: [UInt8]]? {
        guard let d = v?.stringDict else { return nil }
        return d.compactMapValues { $0.unwrapped.bytes }
    }

    /// `ManufacturerData` as `[company: bytes]`.
    static func manufacturerData(_ v: DBusValue?) -> [Int: [UInt8]]? {
        guard let entries = v?.dictEntries else { return nil }
        var out: [Int: [UInt8]] = [:]
        for e in entries {
            if let k = e.key.int, let b = e.value.unwrapped.bytes { out[k] = b }
        }
        return out
    }

    @Test("replay frames load with their data, name and UUIDs; bad ones are refused")
    func scenarioKeys() throws {
        let s = try ScenarioLoader.parse(Self.scenario)
        let d = s.devices[0]
        #expect(d.advertisingInterval == .milliseconds(50))
        #expect(d.replay.count == 3)
        #expect(d.replay[0].serviceData == [Self.full("fe95"): Self.miBeaconA])
        #expect(d.replay[1].manufacturerData == [0xEC88: Self.govee])
        #expect(d.replay[1].name == "GVH5075_ABCD")
        #expect(d.replay[1].uuids == [Self.full("ec88")])
        #expect(d.replay[2].name == nil)
        for (bad, message) in [
            ("replay: []", "at least one frame"),
            ("replay: [{}]", "needs service_data"),
            ("replay: [{ service_data: { fe95: \"01\" }, rssi: 3 }]", "rssi"),
            ("replay: [{ service_data: { fe95: \"zz\" } }]", "hex bytes"),
            ("advertising_interval: 0ms", "at least 1ms"),
            ("broadcast: { kind: pvvx }, replay: [{ name: x }]", "either broadcast or replay"),
        ] {
            do {
                _ = try ScenarioLoader.parse("devices: [{ address: \"C0:FF:EE:00:00:01\", \(bad) }]")
                Issue.record("accepted: \(bad)")
            } catch {
                #expect(error.description.contains(message), "\(error.description)")
            }
        }
    }

    @Test("a replaying device advertises its frames in turn at its interval, as BlueZ signals them")
    func replayInTurn() async throws {
        try await SimHarness.run(Self.scenario) { h in
            let path = h.devicePath(Self.address)
            let recorder = PropertyRecorder(h.client, path: path)
            let started = ContinuousClock.now
            try await h.call(BlueZNames.adapterPath("hci0"), BlueZNames.adapter, "StartDiscovery")
            // Found with the first frame.
            try await eventually("the device is found") {
                (try? await h.property(path, BlueZNames.device, "Address")) == .string(Self.address)
            }
            let firstData = Self.serviceData(try await h.property(path, BlueZNames.device, "ServiceData"))
            let firstName = try await h.property(path, BlueZNames.device, "Name")
            // The export may already be a report or two behind: check the start only when it is first.
            if recorder.all().isEmpty {
                #expect(firstData == [Self.full("fe95"): Self.miBeaconA])
                #expect(firstName == .string("LYWSD03MMC"))
            }
            // Two whole cycles of reports.
            try await eventually("seven reports with data") {
                recorder.all().filter { $0["ServiceData"] != nil || $0["ManufacturerData"] != nil }.count >= 7
            }
            let elapsed = ContinuousClock.now - started
            let reports = recorder.all().filter { $0["ServiceData"] != nil || $0["ManufacturerData"] != nil }
            // Each report carries the data of its frame (and only that kind) with its RSSI.
            var sequence: [String] = []
            for r in reports {
                #expect(r["RSSI"] != nil)
                if let m = Self.manufacturerData(r["ManufacturerData"]) {
                    #expect(r["ServiceData"] == nil)
                    #expect(m[0xEC88] == Self.govee)
                    sequence.append("govee")
                } else if let s = Self.serviceData(r["ServiceData"]) {
                    #expect(s.count == 1)
                    switch s[Self.full("fe95")] {
                    case Self.miBeaconA?: sequence.append("A")
                    case Self.miBeaconB?: sequence.append("B")
                    default: Issue.record("unexpected service data \(s)")
                    }
                }
            }
            // In turn, starting over after the last.
            let cycle = ["A", "govee", "B"]
            let start = try #require(cycle.firstIndex(of: sequence[0]))
            #expect(sequence == (0..<sequence.count).map { cycle[(start + $0) % 3] }, "\(sequence)")
            // The Govee frame's name and UUID: Name/Alias change to it and back, UUIDs gain ec88 once.
            let names = recorder.values("Name").compactMap(\.string)
            #expect(names.contains("GVH5075_ABCD") && names.contains("LYWSD03MMC"), "\(names)")
            #expect(recorder.values("UUIDs").count == 1)
            #expect(try await h.property(path, BlueZNames.device, "UUIDs").strings == [Self.full("ec88")])
            // BlueZ keeps what a report lacks: both kinds of data stay on the object.
            let data = Self.serviceData(try await h.property(path, BlueZNames.device, "ServiceData"))
            #expect(data?.keys.sorted() == [Self.full("fe95")])
            let maker = Self.manufacturerData(try await h.property(path, BlueZNames.device, "ManufacturerData"))
            #expect(maker == [0xEC88: Self.govee])
            // At 50 ms, not at the scenario's 1 s: seven reports came well within a second each.
            #expect(elapsed < .seconds(7), "\(elapsed)")
            // A device without frames is unchanged: no data, one report a second.
            let quiet = h.devicePath("C0:FF:EE:00:00:09")
            try await eventually("the quiet device is found") {
                (try? await h.property(quiet, BlueZNames.device, "Address")) != nil
            }
            #expect(Self.serviceData(try? await h.property(quiet, BlueZNames.device, "ServiceData")) == nil)
        }
    }

    @Test("a discovery filter sees the replayed frame's UUIDs")
    func filterSeesFrameUUIDs() async throws {
        try await SimHarness.run(Self.scenario) { h in
            let adapter = BlueZNames.adapterPath("hci0")
            try await h.call(adapter, BlueZNames.adapter, "SetDiscoveryFilter", [
                .dictionary(key: "s", value: "v", [
                    DBusDictEntry(.string("UUIDs"), .variant(.stringArray([Self.full("ec88")]))),
                ]),
            ])
            try await h.call(adapter, BlueZNames.adapter, "StartDiscovery")
            let path = h.devicePath(Self.address)
            try await eventually("found through the Govee frame's UUID") {
                (try? await h.property(path, BlueZNames.device, "Address")) != nil
            }
            // Found by a frame with the UUID (the first frame has none, and was not reported).
            let maker = Self.manufacturerData(try await h.property(path, BlueZNames.device, "ManufacturerData"))
            #expect(maker == [0xEC88: Self.govee])
            #expect(try await h.property(path, BlueZNames.device, "UUIDs").strings == [Self.full("ec88")])
            // A device that never advertises the UUID is never reported.
            #expect((try? await h.property(h.devicePath("C0:FF:EE:00:00:09"), BlueZNames.device, "Address")) == nil)
        }
    }

    /// An Inkbird's two frames (inkbird-ble's test frames): its "company id" is data, each frame another.
    static let inkbird = """
        settings: { advertise_delay: 10ms, advertise_jitter: 0ms, rssi_interval: 1s }
        devices:
          - name: sps
            address: "49:21:09:09:65:49"
            advertising_interval: 50ms
            advertise: []
            replay:
              - { manufacturer_data: { 0x07fc: "c71200c83d5606" } }
              - { manufacturer_data: { 0x08c8: "84140088996406" } }
        """

    @Test("DuplicateData: each report's ManufacturerData alone (bluetoothd clears it per report); without it the entries add up",
          arguments: [true, false])
    func duplicateDataReplaces(duplicate: Bool) async throws {
        try await SimHarness.run(Self.inkbird) { h in
            let adapter = BlueZNames.adapterPath("hci0")
            if duplicate {
                try await h.call(adapter, BlueZNames.adapter, "SetDiscoveryFilter", [
                    .dictionary(key: "s", value: "v", [DBusDictEntry(.string("DuplicateData"), .variant(.bool(true)))]),
                ])
            }
            let path = h.devicePath("49:21:09:09:65:49")
            let recorder = PropertyRecorder(h.client, path: path)
            try await h.call(adapter, BlueZNames.adapter, "StartDiscovery")
            try await eventually("four reports with data") {
                recorder.all().filter { $0["ManufacturerData"] != nil }.count >= 4
            }
            let reports = recorder.all().compactMap { Self.manufacturerData($0["ManufacturerData"]) }
            if duplicate {
                #expect(reports.allSatisfy { $0.count == 1 }, "\(reports)")
                let ids = reports.compactMap(\.keys.first)
                #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 != $1 }, "frames in turn: \(ids)")
            } else {
                #expect(reports.last?.keys.sorted() == [0x07FC, 0x08C8], "\(reports)")
            }
        }
    }
}
