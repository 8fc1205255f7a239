/// A Python-`struct` format string of a profile decode (SPEC §15), parsed once: where each value
/// sits in the payload and how it is read.
///
/// Syntax (a subset of Python's `struct`, with Python's standard sizes and no alignment):
/// - a byte order first, required: `<` little endian, `>` or `!` big endian, `=` the machine's
///   order with standard sizes (little endian on every machine the bridge runs on). `@` (native
///   sizes and alignment) and a missing prefix (which Python reads as `@`) are refused, so that a
///   layout never differs from Python's.
/// - codes: `x` pad byte (skipped, no value), `b`/`B` int8/uint8, `h`/`H` 16 bits, `i`/`I` and
///   `l`/`L` 32 bits, `q`/`Q` 64 bits, `e` IEEE half float, `f` float, `d` double, `?` bool (any
///   non-zero byte is true), `s` text.
/// - a decimal repeat count before a code: `6x` is six pad bytes, `3B` three uint8 values, `4s`
///   one text of 4 bytes (`s` alone is one byte). `0` is allowed (no bytes, no value; `0s` an
///   empty text).
/// - whitespace between items is ignored (not between a count and its code).
///
/// A layout is at most ``maxSize`` bytes.
public struct ProfileStructLayout: Sendable, Hashable {
    /// The byte order of a layout's multi-byte values.
    public enum ByteOrder: Sendable, Hashable {
        /// Least significant byte first (`<`, `=`).
        case little
        /// Most significant byte first (`>`, `!`).
        case big
    }

    /// How one value is read.
    public enum Kind: Sendable, Hashable {
        /// A two's-complement integer of `size` bytes (`b h i l q`).
        case signed
        /// An unsigned integer of `size` bytes (`B H I L Q`).
        case unsigned
        /// IEEE 754 binary16 (`e`).
        case half
        /// IEEE 754 binary32 (`f`).
        case float
        /// IEEE 754 binary64 (`d`).
        case double
        /// One byte, true when not zero (`?`).
        case bool
        /// `size` bytes of text (`s`).
        case text
    }

    /// One value of the layout.
    public struct Item: Sendable, Hashable {
        /// How the value is read.
        public var kind: Kind
        /// Where it starts in the payload.
        public var offset: Int
        /// How many bytes it takes.
        public var size: Int
        /// The format code it comes from (`"h"`, `"4s"` is `"s"`).
        public var code: Character
        /// 1-based column of that code in the format string.
        public var column: Int

        /// Whether it is an integer (`b B h H i I l L q Q`).
        public var isInteger: Bool { kind == .signed || kind == .unsigned }
        /// Whether it is a floating-point number (`e f d`).
        public var isFloatingPoint: Bool { kind == .half || kind == .float || kind == .double }
    }

    /// The largest layout: a GATT attribute value is at most 512 bytes.
    public static let maxSize = 512

    /// The format string as given.
    public let format: String
    /// The byte order of the prefix.
    public let byteOrder: ByteOrder
    /// The values, in order (pad bytes have none).
    public let items: [Item]
    /// The bytes a payload needs: the sum of every code's size, pad bytes included.
    public let size: Int

    /// Parses `format`.
    /// - Throws: ``ProfileCodecError/Code/badFormat`` with the column of the offending character.
    public init(_ format: String) throws(ProfileCodecError) {
        self.format = format
        let scalars = Array(format.unicodeScalars)
        var index = 0
        while index < scalars.count, Self.isSpace(scalars[index]) { index += 1 }
        guard index < scalars.count else {
            throw ProfileCodecError(
                .badFormat, "empty struct format: write a byte order ('<' or '>') and codes, e.g. \"<hB\"",
                column: 1)
        }
        switch scalars[index] {
        case "<", "=": byteOrder = .little
        case ">", "!": byteOrder = .big
        case "@":
            throw ProfileCodecError(
                .badFormat, "'@' (native sizes and alignment) is not supported: use '<' (little endian) or '>' (big endian)",
                column: index + 1)
        default:
            throw ProfileCodecError(
                .badFormat,
                "the struct format must start with its byte order: '<' (little endian) or '>' (big endian) "
                    + "(without one Python aligns the values, which the bridge does not)",
                column: index + 1)
        }
        index += 1
        var items: [Item] = []
        var offset = 0
        while index < scalars.count {
            let start = index
            if Self.isSpace(scalars[index]) {
                index += 1
                continue
            }
            var count = 1
            if let digit = Self.digit(scalars[index]) {
                count = digit
                index += 1
                while index < scalars.count, let more = Self.digit(scalars[index]) {
                    count = count * 10 + more
                    guard count <= Self.maxSize else {
                        throw ProfileCodecError(
                            .badFormat, "repeat count too large: a struct is at most \(Self.maxSize) bytes",
                            column: start + 1)
                    }
                    index += 1
                }
                guard index < scalars.count, !Self.isSpace(scalars[index]) else {
                    throw ProfileCodecError(
                        .badFormat, "repeat count \(count) is not followed by a format code", column: start + 1)
                }
            }
            let codeScalar = scalars[index]
            let column = index + 1
            guard let (kind, width) = Self.code(codeScalar) else {
                throw ProfileCodecError(.badFormat, Self.unknownCodeMessage(codeScalar), column: column)
            }
            index += 1
            let bytes = kind == nil || kind == .text ? count : count * width
            guard offset + bytes <= Self.maxSize else {
                throw ProfileCodecError(
                    .badFormat, "the struct is longer than \(Self.maxSize) bytes (a GATT value's maximum)",
                    column: start + 1)
            }
            let code = Character(codeScalar)
            switch kind {
            case nil:
                break
            case .text?:
                items.append(Item(kind: .text, offset: offset, size: count, code: code, column: column))
            case let kind?:
                for i in 0..<count {
                    items.append(Item(kind: kind, offset: offset + i * width, size: width, code: code, column: column))
                }
            }
            offset += bytes
        }
        self.items = items
        self.size = offset
    }

    /// The kind and size of a format code; kind `nil` for a pad byte, size 1 for `s` (its count is
    /// its size).
    static func code(_ scalar: Unicode.Scalar) -> (Kind?, Int)? {
        switch scalar {
        case "x": return (nil, 1)
        case "b": return (.signed, 1)
        case "B": return (.unsigned, 1)
        case "h": return (.signed, 2)
        case "H": return (.unsigned, 2)
        case "i", "l": return (.signed, 4)
        case "I", "L": return (.unsigned, 4)
        case "q": return (.signed, 8)
        case "Q": return (.unsigned, 8)
        case "e": return (.half, 2)
        case "f": return (.float, 4)
        case "d": return (.double, 8)
        case "?": return (.bool, 1)
        case "s": return (.text, 1)
        default: return nil
        }
    }

    static func unknownCodeMessage(_ scalar: Unicode.Scalar) -> String {
        let supported = "x b B h H i I l L q Q e f d ? s"
        switch scalar {
        case "<", ">", "!", "=", "@":
            return "the byte order '\(scalar)' must be the first character of the struct format"
        case "n", "N", "P", "p", "c":
            return "format code '\(scalar)' is not supported (supported: \(supported))"
        default:
            return "unknown format code '\(scalar)' (supported: \(supported))"
        }
    }

    @inline(__always) static func digit(_ scalar: Unicode.Scalar) -> Int? {
        scalar.value >= 0x30 && scalar.value <= 0x39 ? Int(scalar.value - 0x30) : nil
    }

    @inline(__always) static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == " " || scalar == "\t" || scalar == "\n" || scalar == "\r"
    }
}
