import Testing
@testable import DBusKit

@Suite struct DBusValueRoundTripTests {
    static let basics: [DBusValue] = [
        .byte(0), .byte(255), .bool(true), .bool(false),
        .int16(-32768), .uint16(65535), .int32(-7), .uint32(4_000_000_000),
        .int64(Int64.min), .uint64(UInt64.max), .double(-1.5), .double(0.1),
        .string(""), .string("héllo ✓"), .objectPath("/org/bluez/hci0"), .signature("a{sv}"),
    ]

    @Test(arguments: basics)
    func basicTypesSurvive(_ value: DBusValue) throws {
        #expect(try DBusValue.marshallingRoundTrip([value]) == [value])
    }

    @Test func containersSurvive() throws {
        let values: [DBusValue] = [
            .bytes([]), .bytes([0, 1, 2, 0xff]),
            .array("s", []), .array("s", [.string("a"), .string("b")]),
            .array("ay", [.bytes([1]), .bytes([])]),
            .structure([.int32(1), .string("x"), .variant(.bool(true))]),
            .variant(.variant(.uint16(7))),
            .dictionary(key: "q", value: "v", [DBusDictEntry(.uint16(0x004c), .variant(.bytes([1, 2])))]),
            .dictionary(key: "s", value: "v", []),
            .stringVariantDict(["Name": .string("x"), "RSSI": .int16(-60), "UUIDs": .stringArray(["180d"])]),
        ]
        #expect(try DBusValue.marshallingRoundTrip(values) == values)
    }

    @Test func managedObjectsShapeSurvives() throws {
        // a{oa{sa{sv}}} as GetManagedObjects returns it.
        let props = DBusValue.stringVariantDict([
            "Address": .string("AA:BB:CC:DD:EE:FF"), "Connected": .bool(false),
            "ManufacturerData": .dictionary(key: "q", value: "v", [DBusDictEntry(.uint16(76), .variant(.bytes([9])))]),
        ])
        let objects = DBusValue.dictionary(key: "o", value: "a{sa{sv}}", [
            DBusDictEntry(.objectPath("/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"),
                          .dictionary(key: "s", value: "a{sv}", [DBusDictEntry(.string("org.bluez.Device1"), props)])),
            DBusDictEntry(.objectPath("/org/bluez/hci0"), .dictionary(key: "s", value: "a{sv}", [])),
        ])
        #expect(objects.signature == "a{oa{sa{sv}}}")
        let back = try DBusValue.marshallingRoundTrip([objects])
        #expect(back == [objects])
        let dict = back[0].stringDict
        #expect(dict?.count == 2)
        let dev = dict?["/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF"]?.stringDict?["org.bluez.Device1"]?.stringDict
        #expect(dev?["Address"]?.string == "AA:BB:CC:DD:EE:FF")
        #expect(dev?["Connected"]?.bool == false)
    }

    @Test func invalidValuesAreRejectedNotAborted() {
        #expect(throws: DBusError.self) { try DBusValue.marshallingRoundTrip([.objectPath("not a path")]) }
        #expect(throws: DBusError.self) { try DBusValue.marshallingRoundTrip([.signature("a{")]) }
        #expect(throws: DBusError.self) { try DBusValue.marshallingRoundTrip([.array("s", [.int32(1)])]) }
        #expect(throws: DBusError.self) { try DBusValue.marshallingRoundTrip([.structure([])]) }
    }

    @Test func accessors() {
        #expect(DBusValue.variant(.int16(-5)).int == -5)
        #expect(DBusValue.array("y", [.byte(1), .byte(2)]).bytes == [1, 2])
        #expect(DBusValue.stringArray(["a", "b"]).strings == ["a", "b"])
        #expect(DBusValue.uint32(3).double == 3)
        #expect(DBusValue.string("x").bool == nil)
    }
}
