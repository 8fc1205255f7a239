/// Writes compact JSON text into `[UInt8]` buffers, without Foundation.
///
/// Strings are escaped per RFC 8259 (`\"`, `\\`, the short escapes for
/// `\b \f \n \r \t`, `\u00XX` for other control characters); integers are
/// written without a fraction; doubles in Swift's shortest round-trip form;
/// non-finite doubles as `null`.
public enum JSONWriter {
    /// Appends the compact JSON text of `value` to `buffer`.
    public static func append(_ value: JSONValue, to buffer: inout [UInt8]) {
        switch value {
        case .null:
            appendLiteral(null: &buffer)
        case .bool(let flag):
            appendBool(flag, to: &buffer)
        case .integer(let number):
            appendInteger(number, to: &buffer)
        case .number(let number):
            appendNumber(number, to: &buffer)
        case .string(let string):
            appendString(string, to: &buffer)
        case .array(let elements):
            buffer.append(0x5B)  // [
            var first = true
            for element in elements {
                if !first { buffer.append(0x2C) }
                first = false
                append(element, to: &buffer)
            }
            buffer.append(0x5D)  // ]
        case .object(let object):
            buffer.append(0x7B)  // {
            var first = true
            for member in object.members {
                if !first { buffer.append(0x2C) }
                first = false
                appendString(member.key, to: &buffer)
                buffer.append(0x3A)  // :
                append(member.value, to: &buffer)
            }
            buffer.append(0x7D)  // }
        }
    }

    @inline(__always)
    static func appendLiteral(null buffer: inout [UInt8]) {
        buffer.append(0x6E); buffer.append(0x75); buffer.append(0x6C); buffer.append(0x6C)
    }

    /// Appends `true` or `false`.
    public static func appendBool(_ value: Bool, to buffer: inout [UInt8]) {
        if value {
            buffer.append(0x74); buffer.append(0x72); buffer.append(0x75); buffer.append(0x65)
        } else {
            buffer.append(0x66); buffer.append(0x61); buffer.append(0x6C); buffer.append(0x73); buffer.append(0x65)
        }
    }

    /// Appends `null`.
    public static func appendNull(to buffer: inout [UInt8]) {
        appendLiteral(null: &buffer)
    }

    /// Appends an integer in decimal, without a fraction.
    public static func appendInteger(_ value: Int64, to buffer: inout [UInt8]) {
        var magnitude = value.magnitude
        if value < 0 { buffer.append(0x2D) }
        if magnitude < 10 {
            buffer.append(0x30 &+ UInt8(truncatingIfNeeded: magnitude))
            return
        }
        var digits = 1
        var rest = magnitude
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0x30, count: digits))
        var index = start + digits - 1
        while magnitude > 0 {
            let (quotient, remainder) = magnitude.quotientAndRemainder(dividingBy: 10)
            buffer[index] = 0x30 &+ UInt8(truncatingIfNeeded: remainder)
            magnitude = quotient
            index -= 1
        }
    }

    /// Appends a double in Swift's shortest round-trip form (`21.5`, `1e-05`), or `null` when not finite.
    public static func appendNumber(_ value: Double, to buffer: inout [UInt8]) {
        guard value.isFinite else {
            appendLiteral(null: &buffer)
            return
        }
        // `description` of a Double is at most 24 bytes: a small string, no heap allocation.
        buffer.append(contentsOf: value.description.utf8)
    }

    /// Appends a JSON string literal (with quotes) for `string`, escaping as needed.
    public static func appendString(_ string: String, to buffer: inout [UInt8]) {
        buffer.append(0x22)
        let done: Void? = string.utf8.withContiguousStorageIfAvailable { bytes in
            appendEscaped(bytes, to: &buffer)
        }
        if done == nil {
            let copy = Array(string.utf8)
            copy.withUnsafeBufferPointer { appendEscaped($0, to: &buffer) }
        }
        buffer.append(0x22)
    }

    /// Appends a JSON string literal (with quotes) for text given as UTF-8 bytes, escaping as needed.
    /// The bytes are assumed to be valid UTF-8.
    public static func appendString(utf8 bytes: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8]) {
        buffer.append(0x22)
        appendEscaped(bytes, to: &buffer)
        buffer.append(0x22)
    }

    static func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, to buffer: inout [UInt8]) {
        var runStart = 0
        var index = 0
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if byte >= 0x20 && byte != 0x22 && byte != 0x5C {
                index += 1
                continue
            }
            if runStart < index {
                buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            }
            buffer.append(0x5C)  // backslash
            switch byte {
            case 0x22: buffer.append(0x22)
            case 0x5C: buffer.append(0x5C)
            case 0x08: buffer.append(0x62)  // b
            case 0x0C: buffer.append(0x66)  // f
            case 0x0A: buffer.append(0x6E)  // n
            case 0x0D: buffer.append(0x72)  // r
            case 0x09: buffer.append(0x74)  // t
            default:
                buffer.append(0x75)  // u
                buffer.append(0x30)
                buffer.append(0x30)
                buffer.append(Hex.digit(byte >> 4))
                buffer.append(Hex.digit(byte & 0x0F))
            }
            index += 1
            runStart = index
        }
        if runStart < count {
            buffer.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<count]))
        }
    }
}
