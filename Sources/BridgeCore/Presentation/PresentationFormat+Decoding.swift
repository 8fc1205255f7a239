extension PresentationFormat {
    /// Decodes a characteristic value by this presentation format into the `"value"` of its
    /// payload; `nil` when the bytes do not fit (wrong length, invalid text), where the caller
    /// falls back to the characteristic's own format.
    ///
    /// - Integers (2bit … sint128, and each half of duint16): the number × 10^``exponent``. With
    ///   an exponent ≥ 0 a result that fits an `Int64` is a JSON integer; otherwise a double,
    ///   correctly rounded from the exact decimal (`0x0929` sint16, exponent -2 → `23.45`).
    /// - boolean: `true`/`false` (the low bit). float32/float64/SFLOAT/FLOAT: as the formats of
    ///   those names (`null` for NaN, ±INF and the IEEE 11073 special values).
    /// - utf8s/utf16s: text (trailing NULs dropped). struct, medASN1: the hex string.
    public func decodeIfValid(_ bytes: some Collection<UInt8>) -> JSONValue? {
        if let layout = format.integerLayout {
            guard let (negative, magnitude) = Self.integer(bytes, layout) else { return nil }
            return Self.scaled(negative: negative, magnitude: magnitude, exponent: Int(exponent))
        }
        switch format {
        case .boolean:
            guard bytes.count == 1, let b = bytes.first else { return nil }
            return .bool(b & 0x01 == 1)
        case .float32: return ValueFormat.float32.decodeIfValid(bytes)
        case .float64: return ValueFormat.float64.decodeIfValid(bytes)
        case .sfloat: return ValueFormat.sfloat.decodeIfValid(bytes)
        case .float: return ValueFormat.float.decodeIfValid(bytes)
        case .duint16:
            let b = Array(bytes)
            guard b.count == 4 else { return nil }
            let first = UInt128(b[0]) | UInt128(b[1]) << 8
            let second = UInt128(b[2]) | UInt128(b[3]) << 8
            return .array([
                Self.scaled(negative: false, magnitude: first, exponent: Int(exponent)),
                Self.scaled(negative: false, magnitude: second, exponent: Int(exponent)),
            ])
        case .utf8s: return ValueFormat.utf8.decodeIfValid(bytes)
        case .utf16s: return Self.utf16(bytes)
        default: return .string(Hex.encode(bytes))
        }
    }

    /// Like ``decodeIfValid(_:)``, with the hex string where the bytes do not fit.
    public func decode(_ bytes: some Collection<UInt8>) -> JSONValue {
        decodeIfValid(bytes) ?? .string(Hex.encode(bytes))
    }

    /// A little-endian integer of exactly `layout.bytes` octets, its value bits only, as sign and
    /// magnitude.
    static func integer(_ bytes: some Collection<UInt8>, _ layout: (bytes: Int, bits: Int, signed: Bool))
        -> (Bool, UInt128)?
    {
        guard bytes.count == layout.bytes else { return nil }
        var raw: UInt128 = 0
        var shift: UInt128 = 0
        for byte in bytes {
            raw |= UInt128(byte) << shift
            shift += 8
        }
        // Formats shorter than their octets sit in the low bits; the others are ignored.
        if layout.bits < 128 { raw &= (UInt128(1) << layout.bits) - 1 }
        guard layout.signed, raw >> (layout.bits - 1) & 1 == 1 else { return (false, raw) }
        // Two's complement of `bits` bits: the magnitude is 2^bits - raw.
        let magnitude = layout.bits == 128 ? (~raw &+ 1) : (UInt128(1) << layout.bits) - raw
        return (true, magnitude)
    }

    /// ±magnitude × 10^exponent as a JSON number.
    static func scaled(negative: Bool, magnitude: UInt128, exponent: Int) -> JSONValue {
        if exponent >= 0 {
            var value = magnitude
            var fits = true
            for _ in 0..<exponent where value != 0 {
                let (product, overflow) = value.multipliedReportingOverflow(by: 10)
                if overflow { fits = false; break }
                value = product
            }
            let limit = negative ? UInt128(Int64.max) + 1 : UInt128(Int64.max)
            if fits && value <= limit {
                return .integer(negative ? Int64(truncatingIfNeeded: 0 &- value) : Int64(value))
            }
        } else if magnitude < (1 << 53) && exponent >= -22 {
            // Both exact doubles: one correctly rounded division.
            let quotient = Double(magnitude) / IEEE11073.powerOfTen(-exponent)
            return .number(negative ? -quotient : quotient)
        }
        // Correctly rounded from the exact decimal text.
        let text = (negative ? "-" : "") + String(magnitude) + "e" + String(exponent)
        return .number(Double(text) ?? .nan)
    }

    /// UTF-16 little-endian text without trailing NULs; `nil` for an odd length or unpaired surrogates.
    static func utf16(_ bytes: some Collection<UInt8>) -> JSONValue? {
        let b = Array(bytes)
        guard b.count % 2 == 0 else { return nil }
        var units: [UInt16] = []
        units.reserveCapacity(b.count / 2)
        var i = 0
        while i < b.count {
            units.append(UInt16(b[i]) | UInt16(b[i + 1]) << 8)
            i += 2
        }
        while units.last == 0 { units.removeLast() }
        guard let text = String(validating: units, as: UTF16.self) else { return nil }
        return .string(text)
    }
}
