import BridgeBase
import DBusKit
import Testing

@testable import BluezSimKit

/// Presence advertisers (SPEC §12 from the peripheral's side): a phone with an IRK advertising from resolvable
/// private addresses that rotate, each a new device object, the old ones removed; an iBeacon.
@Suite(.serialized) struct PrivacyTests {
    static let irkHex = "ec0234a357c8ad05341010a60a397d9b"
    static let irk = PrivacyKey(hex: irkHex)!
    static let phone = "C0:FF:EE:00:00:01"
    static let beaconUUID = "fda50693-a4e2-4fb1-afcf-c6eb07647825"
    /// The beacon's manufacturer data: 02 15, the UUID, major 10001 (0x2711), minor 2, measured power -59 (0xc5).
    static let beaconData: [UInt8] = (try? Hex.decode("0215 fda50693a4e24fb1afcfc6eb07647825 2711 0002 c5")) ?? []

    /// Fast advertisements; the phone rotates every second, a retired address goes 600 ms after its last advertisement.
    static let scenario = """
        settings: { advertise_delay: 10ms, advertise_jitter: 0ms, rssi_interval: 50ms, temporary_timeout: 600ms }
        devices:
          - { name: Phone, address: "\(phone)", irk: "\(irkHex)", rotate_every: 1s, rssi: -55 }
          - { address: "C0:FF:EE:00:00:02", ibeacon: "\(beaconUUID):10001:2", rssi: -70 }
          - { name: Stranger, address: "C0:FF:EE:00:00:03", rssi: -80 }
        """

    @Test("an irk device advertises a resolvable private address of its key; ibeacon sets Apple's manufacturer data")
    func scenarioKeys() throws {
        let s = try ScenarioLoader.parse(Self.scenario)
        let phone = s.devices[0]
        #expect(phone.irk == Self.irk)
        #expect(phone.addressType == "random")
        #expect(phone.rotateEvery == .seconds(1))
        let placed = Simulator.advertisedSpec(phone, unixNanoseconds: 1_700_000_000_000_000_000)
        #expect(placed.identity == Self.phone)
        #expect(placed.controlAddress == Self.phone)
        let address = try #require(BluetoothAddress(placed.address))
        #expect(address.value >> 46 == 0b01)  // a resolvable private address
        #expect(Self.irk.resolves(address))
        // The same period gives the same address (two simulators agree), the next one another.
        #expect(Simulator.advertisedSpec(phone, unixNanoseconds: 1_700_000_000_500_000_000).address == placed.address)
        let next = Simulator.advertisedSpec(phone, unixNanoseconds: 1_700_000_001_000_000_000).address
        #expect(next != placed.address)
        #expect(Self.irk.resolves(try #require(BluetoothAddress(next))))
        // Without a key nothing changes.
        #expect(Simulator.advertisedSpec(s.devices[2], unixNanoseconds: 5).address == "C0:FF:EE:00:00:03")

        // Apple's iBeacon layout: type 0x02, length 0x15, the UUID, major and minor big-endian, -59 dBm (0xC5).
        #expect(s.devices[1].manufacturerData == [0x004C: Self.beaconData])

        for (bad, message) in [
            ("{ address: \"C0:FF:EE:00:00:01\", irk: \"ec02\" }", "irk must be 32 hex digits"),
            ("{ address: \"C0:FF:EE:00:00:01\", rotate_every: 30s }", "rotate_every goes with irk"),
            ("{ address: \"C0:FF:EE:00:00:01\", irk: \"\(Self.irkHex)\", rotate_every: 100ms }", "at least 500ms"),
            ("{ address: \"C0:FF:EE:00:00:01\", irk: \"\(Self.irkHex)\", address_type: public }", "address_type: random"),
            ("{ address: \"C0:FF:EE:00:00:01\", irk: \"\(Self.irkHex)\", count: 2 }", "cannot have copies"),
            ("{ address: \"C0:FF:EE:00:00:01\", ibeacon: \"\(Self.beaconUUID):1\" }", "ibeacon must be uuid:major:minor"),
            ("{ address: \"C0:FF:EE:00:00:01\", ibeacon: \"180f:1:2\" }", "ibeacon must be uuid:major:minor"),
            ("{ address: \"C0:FF:EE:00:00:01\", ibeacon: \"\(Self.beaconUUID):1:65536\" }", "ibeacon must be uuid:major:minor"),
            ("{ address: \"C0:FF:EE:00:00:01\", ibeacon: \"\(Self.beaconUUID):1:2\", manufacturer_data: { 0x004c: \"0215\" } }", "both set"),
        ] {
            do {
                _ = try ScenarioLoader.parse("devices: [\(bad)]")
                Issue.record("accepted: \(bad)")
            } catch {
                #expect(error.description.contains(message), "\(error.description)")
            }
        }
    }

    /// The Device1 objects under hci0: path → properties.
    static func deviceObjects(_ h: SimHarness) async throws -> [String: [String: DBusValue]] {
        let reply = try await h.client.call(destination: BlueZNames.service, path: "/",
                                            interface: "org.freedesktop.DBus.ObjectManager", method: "GetManagedObjects")
        var out: [String: [String: DBusValue]] = [:]
        for (path, interfaces) in reply.first?.stringDict ?? [:] {
            if let device = interfaces.stringDict?[BlueZNames.device]?.stringDict { out[path] = device.mapValues(\.unwrapped) }
        }
        return out
    }

    /// The addresses of the phone's objects (those resolving with its key).
    static func phoneAddresses(_ objects: [String: [String: DBusValue]]) -> Set<String> {
        Set(objects.values.compactMap { $0["Address"]?.string }.filter { BluetoothAddress($0).map(irk.resolves) ?? false })
    }

    /// The address the phone advertises from now (its device not retired).
    static func currentAddress(_ h: SimHarness) async -> String? {
        await h.simulator.advertisedAddress(of: phone)
    }

    @Test("the phone takes a new private address every rotate_every: a new random device object each time, the old one removed")
    func rotation() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.call(BlueZNames.adapterPath("hci0"), BlueZNames.adapter, "StartDiscovery")
            var seen: Set<String> = []
            var mostAtOnce = 0
            try await eventually("three private addresses of the phone", timeout: .seconds(8)) {
                let objects = try await Self.deviceObjects(h)
                let current = Self.phoneAddresses(objects)
                for (_, properties) in objects where current.contains(properties["Address"]?.string ?? "") {
                    #expect(properties["AddressType"]?.string == "random")
                    #expect(properties["Name"]?.string == "Phone")
                }
                seen.formUnion(current)
                mostAtOnce = max(mostAtOnce, current.count)
                return seen.count >= 3
            }
            // An old address goes 600 ms after its last advertisement: never more than two at once (the
            // current one and the one before, at the rotation), never the identity address.
            #expect(mostAtOnce <= 2)
            #expect(!seen.contains(Self.phone))
            let objects = try await Self.deviceObjects(h)
            #expect(objects.values.contains { $0["Address"]?.string == "C0:FF:EE:00:00:03" })  // others stay
            // The identity address names the phone for the controls: out of range, it goes quiet, and every
            // object it had goes with the temporary timeout.
            try await h.simulator.setInRange(address: Self.phone, false)
            try await eventually("no object of the phone left", timeout: .seconds(5)) {
                Self.phoneAddresses(try await Self.deviceObjects(h)).isEmpty
            }
            // Two rotations later (the first successor had a whole period to advertise): nothing came back.
            for _ in 0..<2 {
                let before = await Self.currentAddress(h)
                try await eventually("a rotation", timeout: .seconds(3)) { await Self.currentAddress(h) != before }
            }
            #expect(Self.phoneAddresses(try await Self.deviceObjects(h)).isEmpty)
            try await h.simulator.setInRange(address: Self.phone, true)
            try await eventually("the phone is back", timeout: .seconds(5)) {
                !Self.phoneAddresses(try await Self.deviceObjects(h)).isEmpty
            }
        }
    }

    @Test("an iBeacon's device object carries Apple's manufacturer data in the iBeacon layout")
    func iBeaconAdvertiser() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.call(BlueZNames.adapterPath("hci0"), BlueZNames.adapter, "StartDiscovery")
            let path = h.devicePath("C0:FF:EE:00:00:02")
            try await eventually("the beacon is found") { try await Self.deviceObjects(h)[path] != nil }
            let data = try #require(try await Self.deviceObjects(h)[path]?["ManufacturerData"]?.dictEntries)
            let apple = try #require(data.first { $0.key == .uint16(0x004C) })
            #expect(apple.value.unwrapped.bytes == Self.beaconData)
        }
    }
}
