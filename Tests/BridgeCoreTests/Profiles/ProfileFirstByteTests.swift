import Testing

@testable import BridgeCore

/// `first_byte` dispatch (SPEC §15): keys, refusals, and the struct each byte chooses.
@Suite struct ProfileFirstByteTests {
    static func bytes(_ hex: String) -> [UInt8] { (try? Hex.decode(hex)) ?? [] }

    @Test func keys() throws {
        #expect(try ProfileFirstByte<Int>.byte("01") == 0x01)
        #expect(try ProfileFirstByte<Int>.byte("0A") == 0x0A)
        #expect(try ProfileFirstByte<Int>.byte("a0") == 0xA0)
        #expect(try ProfileFirstByte<Int>.byte("0xff") == 0xFF)
        #expect(try ProfileFirstByte<Int>.byte("0X7f") == 0x7F)
    }

    @Test(arguments: [
        ("", 1, "two hex digits"),
        ("1", 1, "two hex digits"),
        ("001", 3, "two hex digits"),
        ("g1", 1, "'g' is not a hex digit"),
        ("0x", 1, "two hex digits"),
        ("0x1g", 4, "'g' is not a hex digit"),
        (" 01", 1, "' ' is not a hex digit"),
    ])
    func badKeys(key: String, column: Int, message: String) throws {
        let error = try #require(throws: ProfileCodecError.self) { try ProfileFirstByte<Int>.byte(key) }
        #expect(error.code == .badFirstByte)
        #expect(error.column == column)
        #expect(error.message.contains(message), "\(error.message)")
        let inTable = try #require(throws: ProfileCodecError.self) { try ProfileFirstByte<Int>([(key, 1)]) }
        #expect(inTable.column == column)
        #expect(inTable.message.hasPrefix("first_byte key \"\(key)\": "), "\(inTable.message)")
    }

    @Test func sameByteTwiceOrNoEntries() throws {
        let twice = try #require(throws: ProfileCodecError.self) { try ProfileFirstByte<Int>([("0a", 1), ("0A", 2)]) }
        #expect(twice.code == .badFirstByte)
        #expect(twice.message.contains(#""0a" and "0A""#), "\(twice.message)")
        let none = try #require(throws: ProfileCodecError.self) { try ProfileFirstByte<Int>([]) }
        #expect(none.code == .badFirstByte)
    }

    /// Each struct decodes the whole payload, its first byte included.
    @Test func dispatch() throws {
        let dispatch = try ProfileFirstByte<ProfileStruct>([
            ("01", ProfileStruct(format: "<xh", fields: [.init("temperature", .scale(numerator: 1, denominator: 10))])),
            ("02", ProfileStruct(format: "<BB", fields: [.init("kind"), .init("battery")])),
        ])
        #expect(JSONValue.object(try dispatch.decode(Self.bytes("01 d7 00"))).jsonString == #"{"temperature":21.5}"#)
        #expect(JSONValue.object(try dispatch.decode(Self.bytes("02 64 ff"))).jsonString == #"{"kind":2,"battery":100}"#)
        let unknown = try #require(throws: ProfileCodecError.self) { try dispatch.decode(Self.bytes("03 00 00")) }
        #expect(unknown.code == .unknownFirstByte)
        #expect(unknown.message == "first byte 0x03 has no entry in first_byte (known: 01, 02)")
        let empty = try #require(throws: ProfileCodecError.self) { try dispatch.decode([]) }
        #expect(empty.code == .unknownFirstByte)
        let short = try #require(throws: ProfileCodecError.self) { try dispatch.decode([0x01, 0xd7]) }
        #expect(short.code == .tooShort)
    }
}
