import Testing

@testable import BridgeCore

/// `/set` values encoded by a characteristic's Presentation Format (SPEC §11, issue 18): the
/// inverse of the decoding, with the exponent and the format's range.
@Suite struct PresentationEncodingTests {
    typealias Code = PresentationFormat.Code

    func encode(_ code: Code, _ exponent: Int8, _ value: JSONValue) -> Result<[UInt8], CommandError> {
        PresentationFormat(format: code, exponent: exponent).encode(value)
    }

    @Test func integersWithExponents() throws {
        #expect(try encode(.sint16, -2, .number(23.45)).get() == [0x29, 0x09])
        #expect(try encode(.sint16, -2, .number(-0.01)).get() == [0xFF, 0xFF])
        #expect(try encode(.uint16, -1, .integer(100)).get() == [0xE8, 0x03])
        #expect(try encode(.uint8, 0, .integer(255)).get() == [0xFF])
        #expect(try encode(.uint24, 1, .integer(1230)).get() == [0x7B, 0x00, 0x00])
        #expect(try encode(.sint12, 0, .integer(-1)).get() == [0xFF, 0xFF])
        #expect(try encode(.uint48, 0, .integer(0x0102_0304_0506)).get() == [6, 5, 4, 3, 2, 1])
        #expect(try encode(.sint64, 0, .integer(Int64.min)).get() == [0, 0, 0, 0, 0, 0, 0, 0x80])
        // Rounded to the nearest step.
        #expect(try encode(.uint16, -1, .number(10.04)).get() == [0x64, 0x00])
    }

    @Test(arguments: [
        (Code.uint8, Int8(0), JSONValue.integer(256)),
        (.uint8, 0, .integer(-1)),
        (.sint8, 0, .integer(128)),
        (.sint16, -2, .number(327.68)),
        (.uint12, 0, .integer(4096)),
        (.twoBit, 0, .integer(4)),
        (.uint16, 0, .string("12")),
        (.uint16, 0, .number(.infinity)),
    ])
    func outOfRangeOrWrongType(_ code: Code, _ exponent: Int8, _ value: JSONValue) {
        #expect(throws: CommandError.self) { try encode(code, exponent, value).get() }
    }

    @Test func roundTripsWhatItDecodes() throws {
        for (code, exponent, value) in [
            (Code.sint16, Int8(-2), JSONValue.number(23.45)), (.uint32, -3, .number(4294.967)),
            (.sint24, 2, .integer(-500)), (.float32, 0, .number(1.5)), (.boolean, 0, .bool(true)),
            (.utf16s, 0, .string("Küche")), (.sfloat, 0, .number(36.6)),
        ] {
            let format = PresentationFormat(format: code, exponent: exponent)
            let bytes = try format.encode(value).get()
            #expect(format.decode(bytes) == value, "\(code) \(exponent) \(value)")
        }
    }

    @Test func writeCommandsUseThePresentation() throws {
        let cpf = PresentationFormat(format: .sint16, exponent: -2, unit: 0x272F)
        // Bare, as `value`, and `raw` still hex.
        #expect(WriteCommand.parse(Array("23.45".utf8), format: .hex, presentation: cpf).command?.bytes == [0x29, 0x09])
        #expect(WriteCommand.parse(Array(#"{"value": -1.5, "response": true}"#.utf8), format: .hex, presentation: cpf).command
            == WriteCommand(bytes: [0x6A, 0xFF], response: true))
        #expect(WriteCommand.parse(Array(#"{"raw": "0102"}"#.utf8), format: .hex, presentation: cpf).command?.bytes == [1, 2])
        let tooBig = WriteCommand.parse(Array("400".utf8), format: .hex, presentation: cpf)
        #expect(tooBig.error?.message.contains("out of range for sint16") == true, "\(String(describing: tooBig.error))")
        #expect(WriteCommand.parse(Array("warm".utf8), format: .hex, presentation: cpf).error != nil)
        // utf8s: the text itself; struct: the characteristic's own format (hex).
        let text = PresentationFormat(format: .utf8s)
        #expect(WriteCommand.parse(Array("on".utf8), format: .hex, presentation: text).command?.bytes == Array("on".utf8))
        let opaque = PresentationFormat(format: .structure)
        #expect(WriteCommand.parse(Array("01ff".utf8), format: .hex, presentation: opaque).command?.bytes == [1, 0xFF])
    }
}
