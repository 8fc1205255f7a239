import DBusKit
import BridgeBase
import Testing
@testable import BlueZ

@Suite struct BlueZObjectTreeTests {
    static let dev = "/org/bluez/hci0/dev_C8_12_34_56_78_9A"

    static func ifaces(_ list: [(String, [String: DBusValue])]) -> DBusValue {
        .dictionary(key: "s", value: "a{sv}", list.map { DBusDictEntry(.string($0.0), .stringVariantDict($0.1)) })
    }

    static func managed() -> DBusValue {
        .dictionary(key: "o", value: "a{sa{sv}}", [
            DBusDictEntry(.objectPath("/org/bluez/hci0"), ifaces([(BlueZ.adapter, ["Powered": .bool(true), "Address": .string("00:1A:7D:DA:71:10")])])),
            DBusDictEntry(.objectPath(dev), ifaces([(BlueZ.device, [
                "Address": .string("C8:12:34:56:78:9A"), "AddressType": .string("public"), "Name": .string("Polar"),
                "RSSI": .int16(-60), "UUIDs": .stringArray(["0000180D-0000-1000-8000-00805F9B34FB"]),
                "Connected": .bool(false), "ServicesResolved": .bool(false),
            ])])),
        ])
    }

    @Test func loadsManagedObjects() {
        var tree = BlueZObjectTree()
        tree.load(managedObjects: Self.managed())
        #expect(tree.paths(with: BlueZ.adapter) == ["/org/bluez/hci0"])
        let d = tree.device(Self.dev)
        #expect(d?.address.description == "C8:12:34:56:78:9A")
        #expect(d?.rssi == -60)
        #expect(d?.uuids == [BluetoothUUID(uuid16: 0x180d)])
        #expect(d?.connected == false)
        #expect(tree.devices(adapter: "/org/bluez/hci0").count == 1)
        #expect(tree.devices(adapter: "/org/bluez/hci1").isEmpty)
    }

    @Test("the adapter index follows load, InterfacesAdded and InterfacesRemoved")
    func adapterIndex() {
        var tree = BlueZObjectTree()
        tree.load(managedObjects: Self.managed())
        #expect(tree.adapterPaths == ["/org/bluez/hci0"])
        tree.interfacesAdded(path: "/org/bluez/hci1", interfaces: Self.ifaces([(BlueZ.adapter, ["Powered": .bool(false)])]))
        tree.interfacesAdded(
            path: "/org/bluez/hci1", interfaces: Self.ifaces([(BlueZ.advertisementMonitorManager, [:])]))
        #expect(tree.paths(with: BlueZ.adapter) == ["/org/bluez/hci0", "/org/bluez/hci1"])
        // Losing another interface keeps it an adapter; losing Adapter1 does not, whatever is left.
        tree.interfacesRemoved(path: "/org/bluez/hci1", interfaces: [BlueZ.advertisementMonitorManager])
        #expect(tree.adapterPaths == ["/org/bluez/hci0", "/org/bluez/hci1"])
        tree.interfacesAdded(
            path: "/org/bluez/hci1", interfaces: Self.ifaces([(BlueZ.advertisementMonitorManager, [:])]))
        tree.interfacesRemoved(path: "/org/bluez/hci1", interfaces: [BlueZ.adapter])
        #expect(tree.paths(with: BlueZ.adapter) == ["/org/bluez/hci0"])
        #expect(tree.objects["/org/bluez/hci1"] != nil)
        tree.interfacesRemoved(path: "/org/bluez/hci0", interfaces: [BlueZ.adapter])
        #expect(tree.adapterPaths.isEmpty)
        tree.load(managedObjects: Self.managed())
        #expect(tree.adapterPaths == ["/org/bluez/hci0"])
    }

    @Test func appliesSignals() {
        var tree = BlueZObjectTree()
        tree.load(managedObjects: Self.managed())
        tree.propertiesChanged(
            path: Self.dev, interface: BlueZ.device,
            changed: .stringVariantDict(["Connected": .bool(true)]), invalidated: ["RSSI"])
        #expect(tree.device(Self.dev)?.connected == true)
        #expect(tree.device(Self.dev)?.rssi == nil)
        // A change for an unknown object or interface is ignored, not invented.
        tree.propertiesChanged(path: "/nowhere", interface: BlueZ.device, changed: .stringVariantDict(["Connected": .bool(true)]), invalidated: [])
        #expect(tree.objects["/nowhere"] == nil)

        let svc = Self.dev + "/service000c"
        let chr = svc + "/char000d"
        tree.interfacesAdded(path: svc, interfaces: Self.ifaces([(BlueZ.gattService, ["UUID": .string("0000180d-0000-1000-8000-00805f9b34fb"), "Primary": .bool(true)])]))
        tree.interfacesAdded(path: chr, interfaces: Self.ifaces([(BlueZ.gattCharacteristic, [
            "UUID": .string("00002a37-0000-1000-8000-00805f9b34fb"), "Service": .objectPath(svc),
            "Flags": .stringArray(["notify"]), "Notifying": .bool(false), "Value": .bytes([]),
        ])]))
        #expect(tree.services(device: Self.dev).map(\.path) == [svc])
        let c = tree.characteristics(service: svc)
        #expect(c.count == 1 && c[0].canNotify && !c[0].canRead && c[0].service == svc)
        #expect(c[0].uuid == BluetoothUUID(uuid16: 0x2a37) && c[0].properties == [.notify])
        tree.interfacesRemoved(path: chr, interfaces: [BlueZ.gattCharacteristic])
        #expect(tree.characteristics(service: svc).isEmpty)
        #expect(tree.objects[chr] == nil)
    }

    @Test func unexpectedPropertyTypesGiveNilNotCrash() {
        let d = BlueZDevice(path: Self.dev, properties: ["Address": .int32(5), "RSSI": .string("x"), "UUIDs": .bool(true)])
        #expect(d?.address.description == "C8:12:34:56:78:9A")  // from the path
        #expect(d?.rssi == nil)
        #expect(d?.uuids.isEmpty == true)
        // No address anywhere, or a GATT object without a UUID: no snapshot.
        #expect(BlueZDevice(path: "/org/bluez/hci0/xyz", properties: [:]) == nil)
        #expect(GattCharacteristic(path: Self.dev + "/service1/char2", properties: ["Flags": .stringArray(["read"])]) == nil)
    }

    @Test func errorsAreClassifiedByName() {
        #expect(BlueZError(DBusError("org.bluez.Error.InProgress", "")).code == .inProgress)
        #expect(BlueZError(DBusError("org.bluez.Error.Failed", "le-connection-abort-by-local")).code == .failed)
        #expect(BlueZError(DBusError(DBusError.Name.noReply, "")).code == .timeout)
        #expect(BlueZError(DBusError(DBusError.Name.serviceUnknown, "")).code == .serviceUnavailable)
        // A bus policy that refuses the bridge is not BlueZ missing (check-systemd found the log saying so).
        #expect(BlueZError(DBusError(DBusError.Name.accessDenied, "Rejected send message")).code == .accessDenied)
        #expect(BlueZError(DBusError("com.example.Weird", "x")).code == .other)
    }
}
