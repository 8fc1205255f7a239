/// The IEEE 11073-20601 medical float types used by SIG health characteristics:
/// SFLOAT (16 bits: 4-bit signed exponent, 12-bit signed mantissa) and FLOAT
/// (32 bits: 8-bit signed exponent, 24-bit signed mantissa). The value is
/// `mantissa × 10^exponent`.
public enum IEEE11073 {
    /// Decodes an SFLOAT; `nil` for the special values (NaN, NRes, ±INFINITY, reserved).
    public static func decodeSFloat(_ raw: UInt16) -> Double? {
        if (0x07FE...0x0802).contains(raw) { return nil }
        let exponent = Int(Int8(bitPattern: UInt8(truncatingIfNeeded: raw >> 8) & 0xF0) >> 4)
        let mantissa = Int64(Int16(bitPattern: raw << 4) >> 4)
        return scale(mantissa, exponent)
    }

    /// Decodes a FLOAT; `nil` for the special values (NaN, NRes, ±INFINITY, reserved).
    public static func decodeFloat(_ raw: UInt32) -> Double? {
        if (0x007F_FFFE...0x0080_0002).contains(raw) { return nil }
        let exponent = Int(Int8(bitPattern: UInt8(truncatingIfNeeded: raw >> 24)))
        let mantissa = Int64(Int32(bitPattern: raw << 8) >> 8)
        return scale(mantissa, exponent)
    }

    /// Encodes a finite value as an SFLOAT with the most precision that fits, or `nil` when out of range.
    public static func encodeSFloat(_ value: Double) -> UInt16? {
        guard let (mantissa, exponent) = split(value, exponents: -8...7, maxMantissa: 2045) else { return nil }
        return UInt16(truncatingIfNeeded: exponent) << 12 | UInt16(truncatingIfNeeded: mantissa) & 0x0FFF
    }

    /// Encodes a finite value as a FLOAT with the most precision that fits, or `nil` when out of range.
    public static func encodeFloat(_ value: Double) -> UInt32? {
        guard let (mantissa, exponent) = split(value, exponents: -128...127, maxMantissa: 0x7F_FFFD) else {
            return nil
        }
        return UInt32(truncatingIfNeeded: exponent) << 24 | UInt32(truncatingIfNeeded: mantissa) & 0x00FF_FFFF
    }

    static func split(_ value: Double, exponents: ClosedRange<Int>, maxMantissa: Int64) -> (Int64, Int)? {
        guard value.isFinite else { return nil }
        if value == 0 { return (0, 0) }
        for exponent in exponents {
            let scaled = exponent < 0 ? value * powerOfTen(-exponent) : value / powerOfTen(exponent)
            guard scaled.isFinite, scaled.magnitude <= Double(maxMantissa) else { continue }
            var mantissa = Int64(scaled.rounded())
            if mantissa == 0 { return (0, 0) }  // smaller than the finest step: zero
            var exponent = exponent
            // Prefer the shortest mantissa that is still exact (0.1 → 1e-1, not 1000e-4).
            while mantissa % 10 == 0 && exponent < exponents.upperBound {
                mantissa /= 10
                exponent += 1
            }
            return (mantissa, exponent)
        }
        return nil
    }

    static func scale(_ mantissa: Int64, _ exponent: Int) -> Double {
        if exponent == 0 { return Double(mantissa) }
        // Dividing by an exact power of ten rounds correctly, so 366e-1 is exactly the double 36.6.
        return exponent > 0
            ? Double(mantissa) * powerOfTen(exponent)
            : Double(mantissa) / powerOfTen(-exponent)
    }

    /// 10^n; exact for n ≤ 22.
    static func powerOfTen(_ n: Int) -> Double {
        var result = 1.0
        var remaining = n
        while remaining > 0 {
            result *= 10
            remaining -= 1
        }
        return result
    }
}
