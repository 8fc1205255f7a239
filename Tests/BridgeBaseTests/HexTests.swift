import Testing

@testable import BridgeBase

@Suite struct HexTests {
    @Test func encodesLowercase() {
        #expect(Hex.encode([0x01, 0xFF, 0x00, 0xAB]) == "01ff00ab")
        #expect(Hex.encode([UInt8]()) == "")
        var buffer: [UInt8] = Array("x=".utf8)
        Hex.append([0xDE, 0xAD], to: &buffer)
        #expect(String(decoding: buffer, as: UTF8.self) == "x=dead")
        #expect(Hex.encode(Array(0...255)).count == 512)
    }

    @Test(arguments: [
        ("01ff", [0x01, 0xFF] as [UInt8]),
        ("01 ff", [0x01, 0xFF]),
        ("0x01ff", [0x01, 0xFF]),
        ("0X01FF", [0x01, 0xFF]),
        ("  01 FF\n", [0x01, 0xFF]),
        ("", []),
        ("DeadBeef", [0xDE, 0xAD, 0xBE, 0xEF]),
    ])
    func decodes(text: String, bytes: [UInt8]) throws {
        #expect(try Hex.decode(text) == bytes)
        #expect(try Hex.decode(Array(text.utf8)) == bytes)
    }

    @Test func rejectsOddLength() {
        #expect(throws: HexError(code: .oddDigitCount, offset: 3)) { try Hex.decode("01f") }
        #expect(throws: HexError(code: .oddDigitCount, offset: 1)) { try Hex.decode("0 1ff") }
    }

    @Test func rejectsNonHex() throws {
        #expect(throws: HexError(code: .invalidCharacter, offset: 2)) { try Hex.decode("01zz") }
        #expect(throws: HexError.self) { try Hex.decode("0xg0") }
        #expect(try Hex.decode("0x") == [])
        #expect(throws: HexError.self) { try Hex.decode("01:ff") }
    }

    @Test func roundTripsAllBytes() throws {
        let bytes: [UInt8] = Array(0...255)
        #expect(try Hex.decode(Hex.encode(bytes)) == bytes)
    }
}
