import BridgeCore
import Testing

/// The `N-x` field transform: devices that count the other way round (a blind's 0 = open).
@Suite struct ProfileSubtractionTests {
    @Test func parses() throws {
        #expect(try ProfileFieldTransform.parse("100-x") == .subtractedFrom(100))
        #expect(try ProfileFieldTransform.parse(" 100 - x ") == .subtractedFrom(100))
        #expect(try ProfileFieldTransform.parse("-5-x") == .subtractedFrom(-5))
        for bad in ["100-", "100-y", "-x", "100-x2", "x-100"] {
            #expect(throws: ProfileCodecError.self, "\(bad)") { try ProfileFieldTransform.parse(bad) }
        }
    }

    @Test func decodesIntegersOnly() throws {
        let position = try ProfileStruct(format: "<5xB", fields: [.init("position", .subtractedFrom(100))])
        #expect(try position.decode([0x9a, 0xa7, 0x07, 0x0f, 0x32, 0x4e]) == ["position": .integer(22)])
        #expect(try position.decode([0, 0, 0, 0, 0, 0]) == ["position": .integer(100)])
        #expect(throws: ProfileCodecError.self) {
            try ProfileStruct(format: "<f", fields: [.init("position", .subtractedFrom(100))])
        }
    }
}
