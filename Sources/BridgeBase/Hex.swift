/// Lowercase hexadecimal encoding and lenient decoding of byte strings.
///
/// Encoding is used on the notification hot path (the `"raw"` field of every
/// value payload), so it writes straight into a `[UInt8]` buffer without
/// creating intermediate strings.
public enum Hex {
    /// Returns the lowercase ASCII hex digit for a nibble (0...15).
    @inlinable
    @inline(__always)
    public static func digit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? nibble &+ 0x30 : nibble &+ 0x57
    }

    /// Returns the value of an ASCII hex digit (either case), or `nil`.
    @inlinable
    @inline(__always)
    public static func value(of byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte &- 0x30
        case 0x61...0x66: return byte &- 0x57
        case 0x41...0x46: return byte &- 0x37
        default: return nil
        }
    }

    /// Appends the lowercase hex form of `bytes` (two digits per byte, no separators) to `buffer`.
    @inlinable
    public static func append(_ bytes: some Collection<UInt8>, to buffer: inout [UInt8]) {
        buffer.reserveCapacity(buffer.count + 2 * bytes.count)
        for byte in bytes {
            buffer.append(digit(byte >> 4))
            buffer.append(digit(byte & 0x0F))
        }
    }

    /// Returns the lowercase hex form of `bytes` (two digits per byte, no separators), e.g. `"01ff"`.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        let count = bytes.count * 2
        if count == 0 { return "" }
        return String(unsafeUninitializedCapacity: count) { out in
            var index = 0
            for byte in bytes {
                out[index] = digit(byte >> 4)
                out[index + 1] = digit(byte & 0x0F)
                index += 2
            }
            return count
        }
    }

    /// Decodes hex text such as `"01ff"`, `"01 ff"`, `"0x01ff"` or `"01FF"`.
    ///
    /// An optional `0x`/`0X` prefix is accepted, and whitespace between bytes
    /// (never inside one). Leading and trailing whitespace is ignored. The
    /// empty string decodes to no bytes.
    /// - Throws: ``HexError`` for an odd number of digits or a character that is not a hex digit.
    public static func decode(_ text: String) throws(HexError) -> [UInt8] {
        var text = text
        text.makeContiguousUTF8()
        let result = text.utf8.withContiguousStorageIfAvailable { buffer in
            Result { () throws(HexError) in try decode(bytes: buffer) }
        }
        return try (result ?? Result { () throws(HexError) in try decode(Array(text.utf8)) }).get()
    }

    /// Decodes hex text given as UTF-8 bytes; see ``decode(_:)-(String)``.
    public static func decode(_ bytes: [UInt8]) throws(HexError) -> [UInt8] {
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(HexError) in try decode(bytes: buffer) }
        }
        return try result.get()
    }

    static func decode(bytes text: UnsafeBufferPointer<UInt8>) throws(HexError) -> [UInt8] {
        var index = 0
        var end = text.count
        while index < end, isWhitespace(text[index]) { index += 1 }
        while end > index, isWhitespace(text[end - 1]) { end -= 1 }
        if end - index >= 2, text[index] == 0x30, text[index + 1] | 0x20 == 0x78 {  // "0x" / "0X"
            index += 2
        }
        var result: [UInt8] = []
        result.reserveCapacity((end - index) / 2)
        var high: UInt8? = nil
        while index < end {
            let byte = text[index]
            if let nibble = value(of: byte) {
                if let pending = high {
                    result.append(pending << 4 | nibble)
                    high = nil
                } else {
                    high = nibble
                }
            } else if isWhitespace(byte) {
                if high != nil { throw HexError(code: .oddDigitCount, offset: index) }
            } else {
                throw HexError(code: .invalidCharacter, offset: index)
            }
            index += 1
        }
        if high != nil { throw HexError(code: .oddDigitCount, offset: end) }
        return result
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}

/// The error of ``Hex/decode(_:)-(String)``.
public struct HexError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong with the hex text.
    public enum Code: String, Sendable, Hashable {
        /// A byte has only one digit (odd number of digits, or whitespace inside a byte).
        case oddDigitCount = "odd_digit_count"
        /// A character is neither a hex digit nor whitespace.
        case invalidCharacter = "invalid_character"
    }

    /// What is wrong.
    public var code: Code
    /// The UTF-8 offset in the text where the problem was found.
    public var offset: Int

    /// Creates an error.
    public init(code: Code, offset: Int) {
        self.code = code
        self.offset = offset
    }

    /// A human-readable message.
    public var description: String {
        switch code {
        case .oddDigitCount: return "hex text has an odd number of digits (at offset \(offset))"
        case .invalidCharacter: return "invalid hex digit at offset \(offset)"
        }
    }
}
