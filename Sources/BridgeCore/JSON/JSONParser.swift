/// A strict RFC 8259 JSON parser over bytes, safe on any input.
///
/// It rejects invalid UTF-8, unescaped control characters, lone surrogate
/// escapes, leading zeros, trailing data, nesting deeper than `maxDepth`
/// and inputs larger than `maxSize`, always with a ``JSONParseError`` that
/// carries the byte offset. It never traps and always terminates: every step
/// consumes input, recursion is bounded by `maxDepth`, and number literals
/// are bounded in length.
public enum JSONParser {
    /// The default nesting limit of arrays and objects.
    public static let defaultMaxDepth = 64
    /// The default input size limit (1 MiB).
    public static let defaultMaxSize = 1 << 20
    /// The longest number literal accepted (RFC 8259 §9 allows such limits).
    static let maxNumberLength = 512

    /// Parses one JSON value (any type at top level) from UTF-8 bytes.
    public static func parse(
        _ bytes: [UInt8],
        maxSize: Int = defaultMaxSize,
        maxDepth: Int = defaultMaxDepth
    ) throws(JSONParseError) -> JSONValue {
        let result = bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(JSONParseError) in try parse(buffer: buffer, maxSize: maxSize, maxDepth: maxDepth) }
        }
        return try result.get()
    }

    /// Parses one JSON value from a string.
    public static func parse(
        _ text: String,
        maxSize: Int = defaultMaxSize,
        maxDepth: Int = defaultMaxDepth
    ) throws(JSONParseError) -> JSONValue {
        try parse(Array(text.utf8), maxSize: maxSize, maxDepth: maxDepth)
    }

    /// Parses one JSON value from raw memory.
    public static func parse(
        _ bytes: UnsafeRawBufferPointer,
        maxSize: Int = defaultMaxSize,
        maxDepth: Int = defaultMaxDepth
    ) throws(JSONParseError) -> JSONValue {
        try parse(buffer: bytes.assumingMemoryBound(to: UInt8.self), maxSize: maxSize, maxDepth: maxDepth)
    }

    static func parse(
        buffer: UnsafeBufferPointer<UInt8>,
        maxSize: Int,
        maxDepth: Int
    ) throws(JSONParseError) -> JSONValue {
        if buffer.count > maxSize { throw JSONParseError(.sizeLimitExceeded, at: max(0, maxSize)) }
        var cursor = Cursor(bytes: buffer, maxDepth: maxDepth)
        let value = try cursor.parseValue(depth: 0)
        cursor.skipWhitespace()
        if cursor.index != buffer.count { throw JSONParseError(.trailingData, at: cursor.index) }
        return value
    }
}

extension JSONParser {
    struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        let maxDepth: Int
        var index = 0

        init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
            self.bytes = bytes
            self.maxDepth = maxDepth
        }

        @inline(__always)
        mutating func skipWhitespace() {
            while index < bytes.count {
                switch bytes[index] {
                case 0x20, 0x09, 0x0A, 0x0D: index += 1
                default: return
                }
            }
        }

        mutating func parseValue(depth: Int) throws(JSONParseError) -> JSONValue {
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            switch bytes[index] {
            case 0x7B:  // {
                return try parseObject(depth: depth + 1)
            case 0x5B:  // [
                return try parseArray(depth: depth + 1)
            case 0x22:  // "
                return .string(try parseString())
            case 0x74:  // t
                try expectLiteral([0x74, 0x72, 0x75, 0x65])
                return .bool(true)
            case 0x66:  // f
                try expectLiteral([0x66, 0x61, 0x6C, 0x73, 0x65])
                return .bool(false)
            case 0x6E:  // n
                try expectLiteral([0x6E, 0x75, 0x6C, 0x6C])
                return .null
            case 0x2D, 0x30...0x39:
                return try parseNumber()
            default:
                throw JSONParseError(.unexpectedCharacter, at: index)
            }
        }

        mutating func expectLiteral(_ literal: [UInt8]) throws(JSONParseError) {
            for expected in literal {
                guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
                guard bytes[index] == expected else { throw JSONParseError(.unexpectedCharacter, at: index) }
                index += 1
            }
        }

        mutating func parseObject(depth: Int) throws(JSONParseError) -> JSONValue {
            if depth > maxDepth { throw JSONParseError(.depthLimitExceeded, at: index) }
            index += 1  // {
            var members: [JSONObject.Member] = []
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            if bytes[index] == 0x7D {
                index += 1
                return .object(JSONObject(members))
            }
            while true {
                skipWhitespace()
                guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
                guard bytes[index] == 0x22 else { throw JSONParseError(.unexpectedCharacter, at: index) }
                let key = try parseString()
                skipWhitespace()
                guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
                guard bytes[index] == 0x3A else { throw JSONParseError(.unexpectedCharacter, at: index) }
                index += 1
                let value = try parseValue(depth: depth)
                members.append(JSONObject.Member(key: key, value: value))
                skipWhitespace()
                guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
                switch bytes[index] {
                case 0x2C:
                    index += 1
                case 0x7D:
                    index += 1
                    return .object(JSONObject(members))
                default:
                    throw JSONParseError(.unexpectedCharacter, at: index)
                }
            }
        }

        mutating func parseArray(depth: Int) throws(JSONParseError) -> JSONValue {
            if depth > maxDepth { throw JSONParseError(.depthLimitExceeded, at: index) }
            index += 1  // [
            var elements: [JSONValue] = []
            skipWhitespace()
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            if bytes[index] == 0x5D {
                index += 1
                return .array(elements)
            }
            while true {
                elements.append(try parseValue(depth: depth))
                skipWhitespace()
                guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
                switch bytes[index] {
                case 0x2C:
                    index += 1
                case 0x5D:
                    index += 1
                    return .array(elements)
                default:
                    throw JSONParseError(.unexpectedCharacter, at: index)
                }
            }
        }

        /// Parses a string literal; `bytes[index]` is the opening quote.
        mutating func parseString() throws(JSONParseError) -> String {
            index += 1
            let start = index
            // Fast path: no escapes.
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x22 {
                    let string = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
                    index += 1
                    return string
                }
                if byte == 0x5C { break }
                try step(byte)
            }
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            // Slow path: copy what we have, then decode escapes.
            var scratch: [UInt8] = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
            while index < bytes.count {
                let byte = bytes[index]
                if byte == 0x22 {
                    index += 1
                    return String(decoding: scratch, as: UTF8.self)
                }
                if byte == 0x5C {
                    try parseEscape(into: &scratch)
                    continue
                }
                let from = index
                try step(byte)
                scratch.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[from..<index]))
            }
            throw JSONParseError(.unexpectedEnd, at: index)
        }

        /// Validates and skips one unescaped character of a string.
        @inline(__always)
        mutating func step(_ byte: UInt8) throws(JSONParseError) {
            if byte < 0x20 { throw JSONParseError(.controlCharacterInString, at: index) }
            if byte < 0x80 {
                index += 1
            } else {
                guard let length = UTF8Validation.sequenceLength(in: bytes, at: index) else {
                    throw JSONParseError(.invalidUTF8, at: index)
                }
                index += length
            }
        }

        /// Decodes one escape sequence; `bytes[index]` is the backslash.
        mutating func parseEscape(into scratch: inout [UInt8]) throws(JSONParseError) {
            let escapeStart = index
            index += 1
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            let byte = bytes[index]
            index += 1
            switch byte {
            case 0x22: scratch.append(0x22)
            case 0x5C: scratch.append(0x5C)
            case 0x2F: scratch.append(0x2F)
            case 0x62: scratch.append(0x08)
            case 0x66: scratch.append(0x0C)
            case 0x6E: scratch.append(0x0A)
            case 0x72: scratch.append(0x0D)
            case 0x74: scratch.append(0x09)
            case 0x75:
                var scalar = try parseHex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    // A high surrogate must be followed by an escaped low surrogate.
                    guard index + 1 < bytes.count, bytes[index] == 0x5C, bytes[index + 1] == 0x75 else {
                        throw JSONParseError(.invalidUnicodeEscape, at: escapeStart)
                    }
                    index += 2
                    let low = try parseHex4()
                    guard (0xDC00...0xDFFF).contains(low) else {
                        throw JSONParseError(.invalidUnicodeEscape, at: escapeStart)
                    }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw JSONParseError(.invalidUnicodeEscape, at: escapeStart)
                }
                appendUTF8(scalar, to: &scratch)
            default:
                throw JSONParseError(.invalidEscape, at: escapeStart)
            }
        }

        mutating func parseHex4() throws(JSONParseError) -> UInt32 {
            guard index + 4 <= bytes.count else { throw JSONParseError(.unexpectedEnd, at: bytes.count) }
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let nibble = Hex.value(of: bytes[index]) else {
                    throw JSONParseError(.invalidUnicodeEscape, at: index)
                }
                value = value << 4 | UInt32(nibble)
                index += 1
            }
            return value
        }

        func appendUTF8(_ scalar: UInt32, to scratch: inout [UInt8]) {
            switch scalar {
            case 0..<0x80:
                scratch.append(UInt8(scalar))
            case 0x80..<0x800:
                scratch.append(UInt8(0xC0 | scalar >> 6))
                scratch.append(UInt8(0x80 | scalar & 0x3F))
            case 0x800..<0x10000:
                scratch.append(UInt8(0xE0 | scalar >> 12))
                scratch.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
                scratch.append(UInt8(0x80 | scalar & 0x3F))
            default:
                scratch.append(UInt8(0xF0 | scalar >> 18))
                scratch.append(UInt8(0x80 | (scalar >> 12) & 0x3F))
                scratch.append(UInt8(0x80 | (scalar >> 6) & 0x3F))
                scratch.append(UInt8(0x80 | scalar & 0x3F))
            }
        }

        mutating func parseNumber() throws(JSONParseError) -> JSONValue {
            let start = index
            var negative = false
            if bytes[index] == 0x2D {
                negative = true
                index += 1
            }
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            // Integer part, accumulated negatively so that Int64.min fits.
            var accumulator: Int64 = 0
            var overflow = false
            switch bytes[index] {
            case 0x30:
                index += 1
                if index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                    throw JSONParseError(.invalidNumber, at: index)
                }
            case 0x31...0x39:
                while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                    if !overflow {
                        let (times10, o1) = accumulator.multipliedReportingOverflow(by: 10)
                        let (next, o2) = times10.subtractingReportingOverflow(Int64(bytes[index] &- 0x30))
                        if o1 || o2 { overflow = true } else { accumulator = next }
                    }
                    index += 1
                    if index - start > JSONParser.maxNumberLength {
                        throw JSONParseError(.numberOutOfRange, at: start)
                    }
                }
            default:
                throw JSONParseError(.invalidNumber, at: index)
            }
            var isInteger = true
            if index < bytes.count, bytes[index] == 0x2E {  // .
                isInteger = false
                index += 1
                try digits()
            }
            if index < bytes.count, bytes[index] | 0x20 == 0x65 {  // e / E
                isInteger = false
                index += 1
                if index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D { index += 1 }
                try digits()
            }
            if index - start > JSONParser.maxNumberLength {
                throw JSONParseError(.numberOutOfRange, at: start)
            }
            if isInteger && !overflow {
                if negative { return .integer(accumulator) }
                if accumulator != .min { return .integer(-accumulator) }
            }
            let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
            guard let value = Double(text) else { throw JSONParseError(.invalidNumber, at: start) }
            guard value.isFinite else { throw JSONParseError(.numberOutOfRange, at: start) }
            return .number(value)
        }

        /// One or more decimal digits.
        mutating func digits() throws(JSONParseError) {
            guard index < bytes.count else { throw JSONParseError(.unexpectedEnd, at: index) }
            guard (0x30...0x39).contains(bytes[index]) else { throw JSONParseError(.invalidNumber, at: index) }
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                index += 1
            }
        }
    }
}
