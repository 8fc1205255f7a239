/// Hexadecimal encoding and decoding without Foundation.
public enum Hex {
    private static let digits: [UInt8] = Array("0123456789abcdef".utf8)

    /// Lowercase hex of `bytes`, no separators.
    public static func encode(_ bytes: [UInt8]) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.count * 2)
        append(bytes, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the lowercase hex of `bytes` to `out` (ASCII).
    public static func append(_ bytes: [UInt8], to out: inout [UInt8]) {
        for b in bytes {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 0x0f)])
        }
    }

    /// Decodes hex text. Accepts an optional `0x` prefix, and spaces, colons, dashes
    /// or `0x` prefixes between bytes (`"01ff"`, `"01 ff"`, `"0x01 0xff"`, `"01:ff"`).
    public static func decode(_ text: String) -> [UInt8]? {
        var out = [UInt8]()
        var pending: UInt8? = nil
        let chars = Array(text.utf8)
        var i = 0
        while i < chars.count {
            let c = chars[i]
            if c == UInt8(ascii: "0"), i + 1 < chars.count, chars[i + 1] | 0x20 == UInt8(ascii: "x"), pending == nil {
                i += 2
                continue
            }
            if c == UInt8(ascii: " ") || c == UInt8(ascii: ":") || c == UInt8(ascii: "-") || c == UInt8(ascii: "\t") {
                if pending != nil { return nil }
                i += 1
                continue
            }
            guard let v = value(of: c) else { return nil }
            if let high = pending {
                out.append(high << 4 | v)
                pending = nil
            } else {
                pending = v
            }
            i += 1
        }
        return pending == nil ? out : nil
    }

    private static func value(of c: UInt8) -> UInt8? {
        switch c {
        case 48...57: return c - 48
        case 97...102: return c - 87
        case 65...70: return c - 55
        default: return nil
        }
    }
}
