import Testing

@testable import BridgeCore

/// The struct format parser of SPEC §15 decodes: Python `struct` sizes, byte orders, repeat counts
/// and the refusals with their columns.
@Suite struct ProfileStructLayoutTests {
    /// Each code's size and kind, as Python's standard sizes (`struct.calcsize("<" + code)`).
    @Test(arguments: [
        ("<b", 1, ProfileStructLayout.Kind.signed), ("<B", 1, .unsigned), ("<h", 2, .signed), ("<H", 2, .unsigned),
        ("<i", 4, .signed), ("<I", 4, .unsigned), ("<l", 4, .signed), ("<L", 4, .unsigned),
        ("<q", 8, .signed), ("<Q", 8, .unsigned), ("<e", 2, .half), ("<f", 4, .float), ("<d", 8, .double),
        ("<?", 1, .bool), ("<s", 1, .text),
    ])
    func codeSizes(format: String, size: Int, kind: ProfileStructLayout.Kind) throws {
        let layout = try ProfileStructLayout(format)
        #expect(layout.size == size)
        #expect(layout.items.map(\.kind) == [kind])
        #expect(layout.items.map(\.size) == [size])
    }

    @Test func byteOrders() throws {
        #expect(try ProfileStructLayout("<H").byteOrder == .little)
        #expect(try ProfileStructLayout("=H").byteOrder == .little)
        #expect(try ProfileStructLayout(">H").byteOrder == .big)
        #expect(try ProfileStructLayout("!H").byteOrder == .big)
    }

    /// Offsets without alignment: `<hxIBh6x` is 16 bytes, as Python computes it (`calcsize` 16).
    @Test func offsetsAndPadding() throws {
        let layout = try ProfileStructLayout("<hxIBh6x")
        #expect(layout.size == 16)
        #expect(layout.items.map(\.offset) == [0, 3, 7, 8])
        #expect(layout.items.map(\.code) == ["h", "I", "B", "h"])
        #expect(layout.items.map(\.column) == [2, 4, 5, 6])
    }

    /// `3B` is three values, `4s` one text of 4 bytes, `6x` six pad bytes, `0s` an empty text, `0B` nothing.
    @Test func repeatCounts() throws {
        let layout = try ProfileStructLayout("<3B4s6x2H0s0B")
        #expect(layout.size == 3 + 4 + 6 + 4)
        #expect(layout.items.map(\.kind) == [.unsigned, .unsigned, .unsigned, .text, .unsigned, .unsigned, .text])
        #expect(layout.items.map(\.offset) == [0, 1, 2, 3, 13, 15, 17])
        #expect(layout.items.map(\.size) == [1, 1, 1, 4, 2, 2, 0])
        #expect(try ProfileStructLayout("<12x").size == 12)
        #expect(try ProfileStructLayout("<12x").items.isEmpty)
    }

    /// Whitespace between items is ignored, as in Python.
    @Test func whitespaceBetweenItems() throws {
        let layout = try ProfileStructLayout(" < h x  4s ")
        #expect(layout.size == 7)
        #expect(layout.items.map(\.offset) == [0, 3])
    }

    @Test func maxSize() throws {
        #expect(try ProfileStructLayout("<512x").size == 512)
        #expect(try ProfileStructLayout("<64Q").size == 512)
        let error = try #require(throws: ProfileCodecError.self) { try ProfileStructLayout("<510xQ") }
        #expect(error.code == .badFormat)
        #expect(error.column == 6)
        let count = try #require(throws: ProfileCodecError.self) { try ProfileStructLayout("<B99999x") }
        #expect(count.code == .badFormat)
        #expect(count.column == 3)
    }

    /// Each refusal, with the column a loader turns into `file:line:column`.
    @Test(arguments: [
        ("", 1, "empty struct format"),
        ("hB", 1, "must start with its byte order"),
        ("@hB", 1, "'@'"),
        ("<hzB", 3, "unknown format code 'z'"),
        ("<h<B", 3, "must be the first character"),
        ("<hp", 3, "'p' is not supported"),
        ("<h4", 3, "repeat count 4 is not followed by a format code"),
        ("<4 s", 2, "repeat count 4 is not followed"),
        ("<hé", 3, "unknown format code 'é'"),
        ("<éx", 2, "unknown format code"),
    ])
    func badFormats(format: String, column: Int, message: String) throws {
        let error = try #require(throws: ProfileCodecError.self) { try ProfileStructLayout(format) }
        #expect(error.code == .badFormat)
        #expect(error.column == column)
        #expect(error.message.contains(message), "\(error.message)")
        #expect(error.description.hasPrefix("column \(column): "))
    }

    /// Columns count Unicode scalars, as the config loader's do.
    @Test func columnsCountScalars() throws {
        let error = try #require(throws: ProfileCodecError.self) { try ProfileStructLayout("<\u{00e9}") }
        #expect(error.column == 2)
    }
}
