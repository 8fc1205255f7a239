import Testing

@testable import DBusKit

/// The in-place reader gives what the decoder gives, and refuses what is not there.
@Suite struct DBusArgumentReaderTests {
    /// `PropertiesChanged` as BlueZ sends an advertisement report.
    static let report: [DBusValue] = [
        .string("org.bluez.Device1"),
        .stringVariantDict([
            "RSSI": .int16(-61),
            "ServiceData": .dictionary(key: "s", value: "v", [
                DBusDictEntry(.string("0000181a-0000-1000-8000-00805f9b34fb"), .variant(.bytes([0xa4, 0xc1, 0x38]))),
            ]),
        ]),
        .array("s", []),
    ]

    @Test func walksAPropertiesChangedSignal() throws {
        try DBusArgumentReader.over(Self.report) { start in
            var args = start
            #expect(args.kind == .string)
            #expect(args.stringEquals("org.bluez.Device1"))
            #expect(!args.stringEquals("org.bluez.Device"))
            #expect(!args.stringEquals("org.bluez.Device12"))
            #expect(args.string() == "org.bluez.Device1")
            #expect(args.int16() == nil)
            args.next()
            #expect(args.kind == .array)
            var entries = args.children()
            var seen: [String: DBusValue] = [:]
            while !entries.isEnd {
                #expect(entries.kind == .dictEntry)
                var entry = entries.children()
                let key = entry.string() ?? "?"
                entry.next()
                #expect(entry.kind == .variant)
                seen[key] = entry.children().value()
                if key == "RSSI" { #expect(entry.children().int16() == -61) }
                entries.next()
            }
            #expect(seen["RSSI"] == .int16(-61))
            let service = try? #require(seen["ServiceData"]?.dictEntries?.first)
            #expect(service?.value == .variant(.bytes([0xa4, 0xc1, 0x38])))
            args.next()
            #expect(args.kind == .array)
            #expect(args.children().isEnd)
            args.next()
            #expect(args.isEnd)
            args.next()
            #expect(args.isEnd)
            #expect(args.value() == .structure([]))
        }
    }

    @Test func bytesAreLentOnlyFromByteArrays() throws {
        try DBusArgumentReader.over([.bytes([1, 2, 3]), .bytes([]), .array("s", [.string("x")]), .uint16(7)]) { start in
            var args = start
            #expect(args.bytes() == [1, 2, 3])
            #expect(args.withBytes { $0.count } == 3)
            args.next()
            #expect(args.bytes() == [])
            args.next()
            #expect(args.bytes() == nil)
            #expect(args.children().string() == "x")
            args.next()
            #expect(args.uint16() == 7)
            #expect(args.bytes() == nil)
            #expect(args.children().isEnd)
        }
    }

    @Test("value() of each argument is what the decoder makes of it", arguments: [
        DBusValue.byte(9), .bool(true), .int16(-2), .uint16(2), .int32(-3), .uint32(3), .int64(-4), .uint64(4),
        .double(0.5), .string("héllo"), .objectPath("/org/bluez/hci0"), .signature("a{sv}"),
        .bytes([0, 255]), .array("as", [.stringArray(["a"]), .stringArray([])]),
        .structure([.int32(1), .variant(.string("v"))]), .variant(.variant(.byte(1))),
        .dictionary(key: "q", value: "v", [DBusDictEntry(.uint16(0x004c), .variant(.bytes([2, 21])))]),
    ])
    func valueMatchesTheDecoder(_ value: DBusValue) throws {
        let decoded = try DBusValue.marshallingRoundTrip([value])
        #expect(try DBusArgumentReader.over([value]) { $0.value() } == decoded.first)
    }
}
