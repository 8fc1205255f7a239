import BlueZ
import BridgeBase
import DBusKit
import Logging
import Synchronization
import TestSupport
import Testing

/// Advertisement reports and characteristic values are read in place (`BlueZClient+Peek`): the
/// reports, the object tree and the events must be what the decoding path made of them, and a
/// report after a change the peek does not take must not carry stale data.
@Suite struct BlueZClientPeekTests {
    static let logger = Logger(label: "peek-test") { _ in SwiftLogNoOpLogHandler() }
    static let device = "/org/bluez/hci0/dev_A4_C1_38_00_00_05"
    static let pvvx = "0000181a-0000-1000-8000-00805f9b34fb"

    /// A stand-in `org.bluez` with one device object, and a started client.
    final class Rig: Sendable {
        let bus: TestBus
        let server: DBusObjectServer
        let serverConnection: DBusConnection
        let client: BlueZClient
        let reports = Mutex<[BlueZAdvertisement]>([])
        let values = Mutex<[(String, [UInt8])]>([])

        init(takeReports: Bool = true) async throws {
            bus = try TestBus()
            serverConnection = try DBusConnection.connect(address: bus.address, logger: BlueZClientPeekTests.logger)
            try await serverConnection.requestName("org.bluez")
            server = DBusObjectServer(connection: serverConnection, logger: BlueZClientPeekTests.logger)
            server.addObjectManager(path: "/")
            server.addInterfaces(path: BlueZClientPeekTests.device, [
                DBusInterfaceExport(name: "org.bluez.Device1", properties: [
                    "Address": .string("A4:C1:38:00:00:05"), "AddressType": .string("public"),
                    "Name": .string("ATC_000005"), "RSSI": .int16(-70),
                ]),
            ])
            server.addInterfaces(path: BlueZClientPeekTests.device + "/service0001/char0002", [
                DBusInterfaceExport(name: "org.bluez.GattCharacteristic1", properties: [
                    "UUID": .string("0000ffe1-0000-1000-8000-00805f9b34fb"), "Value": .bytes([]),
                ]),
            ])
            let connection = try DBusConnection.connect(address: bus.address, logger: BlueZClientPeekTests.logger)
            client = BlueZClient(connection: connection, logger: BlueZClientPeekTests.logger)
            client.setAdvertisementHandler { [weak self] ad in
                self?.reports.withLock { $0.append(ad) }
                return takeReports
            }
            client.setValueHandler { [weak self] path, bytes in self?.values.withLock { $0.append((path, bytes)) } }
            await client.start()
        }

        func serviceData(_ bytes: [UInt8]) -> DBusValue {
            .dictionary(key: "s", value: "v", [DBusDictEntry(.string(BlueZClientPeekTests.pvvx), .variant(.bytes(bytes)))])
        }

        func advertise(_ changes: [String: DBusValue]) {
            server.setProperties(path: BlueZClientPeekTests.device, interface: "org.bluez.Device1", changes)
        }

        /// Waits until `count` reports came (bounded).
        func reports(_ count: Int) async throws -> [BlueZAdvertisement] {
            for _ in 0..<500 {
                let now = reports.withLock { $0 }
                if now.count >= count { return now }
                try await Task.sleep(for: .milliseconds(10))
            }
            return reports.withLock { $0 }
        }

        func stop() {
            client.stop()
            client.connection.close()
            serverConnection.close()
        }
    }

    @Test("a data report, an RSSI-only report, then a change the peek leaves to the decoder")
    func reportsMatchTheTree() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        #expect(rig.client.isAvailable)
        let uuid = try #require(BluetoothUUID("181a"))
        rig.advertise(["RSSI": .int16(-61), "ServiceData": rig.serviceData([1, 2, 3])])
        rig.advertise(["RSSI": .int16(-64)])
        var got = try await rig.reports(2)
        try #require(got.count == 2)
        #expect(got[0].address == BluetoothAddress("A4:C1:38:00:00:05"))
        #expect(got[0].rssi == -61 && got[0].dataChanged && got[0].serviceData == [uuid: [1, 2, 3]])
        #expect(got[1].rssi == -64 && !got[1].dataChanged && got[1].serviceData == [uuid: [1, 2, 3]])
        let properties = rig.client.tree.properties(path: Self.device, interface: "org.bluez.Device1")
        #expect(properties?["RSSI"] == .int16(-64))
        #expect(BlueZDevice.serviceData(properties?["ServiceData"]) == [uuid: [1, 2, 3]])
        // Name with new data: not the peek's (another property), decoded whole; the next RSSI-only
        // report must carry the new data, not what the peek parsed before.
        rig.advertise(["Name": .string("Kitchen"), "ServiceData": rig.serviceData([9])])
        rig.advertise(["RSSI": .int16(-66)])
        got = try await rig.reports(4)
        try #require(got.count == 4)
        #expect(got[2].dataChanged && got[2].serviceData == [uuid: [9]])
        #expect(got[3].rssi == -66 && !got[3].dataChanged && got[3].serviceData == [uuid: [9]])
        #expect(rig.client.tree.device(Self.device)?.name == "Kitchen")
    }

    @Test("a report the handler does not take becomes an event naming what changed")
    func untakenReportsBecomeEvents() async throws {
        let rig = try await Rig(takeReports: false)
        defer { rig.stop() }
        var events = rig.client.events.makeAsyncIterator()
        guard case .serviceAvailable? = await events.next() else {
            Issue.record("the first event is not serviceAvailable")
            return
        }
        rig.advertise(["RSSI": .int16(-50), "ManufacturerData": .dictionary(key: "q", value: "v", [
            DBusDictEntry(.uint16(0x004C), .variant(.bytes([2, 21]))),
        ])])
        let event = await events.next()
        guard case .propertiesChanged(let path, let interface, let changed)? = event else {
            Issue.record("expected propertiesChanged, got \(String(describing: event))")
            return
        }
        #expect(path == Self.device && interface == "org.bluez.Device1")
        #expect(Set(changed) == ["RSSI", "ManufacturerData"])
        let got = try await rig.reports(1)
        #expect(got.first?.manufacturerData == [0x004C: [2, 21]])
    }

    @Test("a characteristic's Value goes to the value handler, with nothing else in the signal")
    func valuesGoToTheValueHandler() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        let path = Self.device + "/service0001/char0002"
        rig.server.setProperties(path: path, interface: "org.bluez.GattCharacteristic1", ["Value": .bytes([7, 8])])
        for _ in 0..<500 where rig.values.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
        let values = rig.values.withLock { $0 }
        #expect(values.count == 1)
        #expect(values.first?.0 == path && values.first?.1 == [7, 8])
    }

    @Test("the name and advertised UUIDs travel with every report, parsed again only when they change")
    func nameAndUUIDs() async throws {
        let rig = try await Rig()
        defer { rig.stop() }
        let uuid = try #require(BluetoothUUID("181a"))
        let fee5 = try #require(BluetoothUUID("fee5"))
        rig.advertise(["RSSI": .int16(-61), "ServiceData": rig.serviceData([1])])
        rig.advertise(["RSSI": .int16(-62)])
        // UUIDs and Name change (the decoding path); then data only (the peek, from its cache).
        rig.advertise([
            "RSSI": .int16(-65), "UUIDs": .stringArray(["0000fee5-0000-1000-8000-00805f9b34fb"]), "Name": .string("TP357 (2B4C)"),
        ])
        rig.advertise(["RSSI": .int16(-63), "ServiceData": rig.serviceData([2])])
        rig.advertise(["RSSI": .int16(-64)])
        let got = try await rig.reports(5)
        try #require(got.count == 5)
        #expect(got[0].name == "ATC_000005" && got[0].serviceUUIDs.isEmpty)
        #expect(got[1].name == "ATC_000005" && !got[1].dataChanged)
        #expect(got[2].name == "TP357 (2B4C)" && got[2].serviceUUIDs == [fee5])
        #expect(got[3].name == "TP357 (2B4C)" && got[3].serviceUUIDs == [fee5] && got[3].serviceData == [uuid: [2]])
        #expect(got[4].name == "TP357 (2B4C)" && got[4].serviceUUIDs == [fee5] && got[4].serviceData == [uuid: [2]])
    }

    @Test("the local name: Name, else an Alias that is not BlueZ's address-derived default")
    func localName() throws {
        let address = try #require(BluetoothAddress("A4:C1:38:00:00:05"))
        #expect(BlueZNames.localName(name: "LYWSD03MMC", alias: "Kitchen", address: address) == "LYWSD03MMC")
        #expect(BlueZNames.localName(name: nil, alias: "Kitchen", address: address) == "Kitchen")
        #expect(BlueZNames.localName(name: nil, alias: "A4-C1-38-00-00-05", address: address) == nil)
        #expect(BlueZNames.localName(name: nil, alias: "a4-c1-38-00-00-05", address: address) == nil)
        #expect(BlueZNames.localName(name: nil, alias: "A4-C1-38-00-00-06", address: address) == "A4-C1-38-00-00-06")
        #expect(BlueZNames.localName(name: "", alias: "GVH5075_1234", address: address) == "GVH5075_1234")
        #expect(BlueZNames.localName(name: nil, alias: nil, address: address) == nil)
    }
}
