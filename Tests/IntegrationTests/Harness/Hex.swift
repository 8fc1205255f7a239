/// Hex text of the payloads.
enum Hex {
    /// The bytes of lowercase or uppercase hex text without separators; `nil` when malformed.
    static func bytes(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var result: [UInt8] = []
        result.reserveCapacity(digits.count / 2)
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            result.append(high << 4 | low)
            index += 2
        }
        return result
    }

    /// Whether `text` is lowercase hex of whole bytes (the SPEC's `raw`).
    static func isLowercase(_ text: String) -> Bool {
        text.utf8.count % 2 == 0 && text.utf8.allSatisfy { ("0"..."9").contains(Character(Unicode.Scalar($0))) || ("a"..."f").contains(Character(Unicode.Scalar($0))) }
    }

    private static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return digit - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Little-endian unsigned integer of `bytes[offset..<offset+size]`.
    static func uintLE(_ bytes: [UInt8], at offset: Int, size: Int) -> Int? {
        guard offset >= 0, offset + size <= bytes.count else { return nil }
        var value = 0
        for index in (offset..<offset + size).reversed() { value = value << 8 | Int(bytes[index]) }
        return value
    }
}
