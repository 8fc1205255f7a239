import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// ``ObjectTreeCentral/deviceObjects(_:)``: a device's GATT objects in one pass over the tree (a session reads them for
/// every input), nested and ordered as BlueZ's paths say, nothing of another device.
@Suite struct DeviceObjectsTests {
    @Test("services, their characteristics and their descriptors, in path order; another device's objects are not mixed in")
    func nested() throws {
        let central = FakeCentral(clock: FakeClock())
        let path = central.addDevice(
            "AA:BB:CC:DD:EE:01", name: "one",
            services: ["180f": [(uuid: "2a19", flags: ["read", "notify"], value: [50])],
                       "181a": [(uuid: "2a6e", flags: ["read"], value: [1, 2]), (uuid: "2a6f", flags: ["notify"], value: [3])]])
        let other = central.addDevice(
            "AA:BB:CC:DD:EE:02", name: "two", services: ["180f": [(uuid: "2a19", flags: ["read"], value: [7])]])
        let humidity = central.characteristicPath(device: path, "2a6f")
        let format = central.addDescriptor(characteristic: humidity, uuid: "2904", value: [0x06, 0, 0, 0, 1, 0, 0])
        let text = central.addDescriptor(characteristic: humidity, uuid: "2901", value: Array("rh".utf8))
        _ = central.addDescriptor(characteristic: central.characteristicPath(device: other, "2a19"), uuid: "2901", value: [0x41])

        let objects = try #require(central.deviceObjects(path))
        #expect(objects.device.path == path)
        #expect(objects.services.map(\.service.uuid) == [BluetoothUUID("180f")!, BluetoothUUID("181a")!])
        #expect(objects.services.map { $0.characteristics.map(\.characteristic.uuid) }
            == [[BluetoothUUID("2a19")!], [BluetoothUUID("2a6e")!, BluetoothUUID("2a6f")!]])
        #expect(objects.services.allSatisfy { s in s.characteristics.allSatisfy { $0.characteristic.path.hasPrefix(s.service.path + "/") } })
        let descriptors = objects.services[1].characteristics[1].descriptors.map(\.path)
        #expect(descriptors == [format, text].sorted(), "\(descriptors)")
        #expect(objects.services[0].characteristics[0].descriptors.isEmpty && objects.services[1].characteristics[0].descriptors.isEmpty)
        #expect(central.deviceObjects(other)?.services.flatMap { $0.characteristics.flatMap(\.descriptors) }.count == 1)
        #expect(central.deviceObjects(path + "0") == nil)
    }
}
