import Testing

@testable import BridgeBase

@Suite struct BluetoothUUIDTests {
    @Test(arguments: [
        ("180d", "0000180d-0000-1000-8000-00805f9b34fb", "180d"),
        ("180D", "0000180d-0000-1000-8000-00805f9b34fb", "180d"),
        ("0x180D", "0000180d-0000-1000-8000-00805f9b34fb", "180d"),
        ("0X2a37", "00002a37-0000-1000-8000-00805f9b34fb", "2a37"),
        ("0000180d", "0000180d-0000-1000-8000-00805f9b34fb", "180d"),
        ("0x0000FFE0", "0000ffe0-0000-1000-8000-00805f9b34fb", "ffe0"),
        ("1234abcd", "1234abcd-0000-1000-8000-00805f9b34fb", "1234abcd-0000-1000-8000-00805f9b34fb"),
        ("0000180D-0000-1000-8000-00805F9B34FB", "0000180d-0000-1000-8000-00805f9b34fb", "180d"),
        ("6E400001-B5A3-F393-E0A9-E50E24DCCA9E", "6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"),
        ("6e400001b5a3f393e0a9e50e24dcca9e", "6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"),
    ])
    func parsesAndFormats(input: String, canonical: String, short: String) throws {
        let uuid = try #require(BluetoothUUID(input))
        #expect(uuid.uuidString == canonical)
        #expect(uuid.description == canonical)
        #expect(uuid.shortForm == short)
        #expect(BluetoothUUID(canonical) == uuid)
    }

    @Test(arguments: [
        "", "0x", "18d", "180", "180dd", "xyzw", "0x180g", "0000180d-0000-1000-8000-00805f9b34f",
        "0000180d-0000-1000-8000-00805f9b34fbb", "0000180d0000-1000-8000-00805f9b34fb-",
        "0000180d-00001000-8000-00805f9b34fb-", "0x0000180d-0000-1000-8000-00805f9b34fb", " 180d", "180d ",
        "-180d", "18-0d", "0000180d-0000-1000-8000-00805f9b34fbaa",
    ])
    func rejectsMalformed(input: String) {
        #expect(BluetoothUUID(input) == nil)
    }

    @Test func sixteenAndThirtyTwoBitAccessors() throws {
        let heartRate = BluetoothUUID(uuid16: 0x180D)
        #expect(heartRate.uuid16 == 0x180D)
        #expect(heartRate.uuid32 == 0x180D)
        let thirtyTwo = BluetoothUUID(uuid32: 0x1234_ABCD)
        #expect(thirtyTwo.uuid16 == nil)
        #expect(thirtyTwo.uuid32 == 0x1234_ABCD)
        let custom = try #require(BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e"))
        #expect(custom.uuid16 == nil)
        #expect(custom.uuid32 == nil)
    }

    @Test func hashableAndComparable() throws {
        let a = try #require(BluetoothUUID("180d"))
        let b = try #require(BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB"))
        #expect(Set([a, b]).count == 1)
        #expect(BluetoothUUID(uuid16: 0x180D) < BluetoothUUID(uuid16: 0x180F))
    }
}

@Suite struct BluetoothAddressTests {
    @Test func parsesForms() throws {
        let address = try #require(BluetoothAddress("C8:12:34:56:78:9A"))
        #expect(address.description == "C8:12:34:56:78:9A")
        #expect(address.topicSegment == "c8123456789a")
        #expect(address.bytes == [0xC8, 0x12, 0x34, 0x56, 0x78, 0x9A])
        #expect(BluetoothAddress("c8:12:34:56:78:9a") == address)
        #expect(BluetoothAddress("c8123456789a") == address)
        #expect(BluetoothAddress("C8_12_34_56_78_9A") == address)
    }

    @Test(arguments: ["", "C8:12:34:56:78", "C8:12:34:56:78:9G", "C8-12-34-56-78-9A", "C8:12_34:56:78:9A", "C81:2:34:56:78:9A", "c8123456789"])
    func rejectsMalformed(input: String) {
        #expect(BluetoothAddress(input) == nil)
    }
}
