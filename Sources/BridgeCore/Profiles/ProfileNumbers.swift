/// How a profile decode presents its numbers (see ``ProfileStruct``): integers exact, scales as one
/// correctly rounded division of exact integers (as the BTHome decoder scales its objects), floats
/// with the fewest decimals that give back the same float.
enum ProfileNumbers {
    /// A float as read from a payload, by its bits.
    enum FloatingPoint {
        case half(UInt16)
        case float(UInt32)
        case double(UInt64)

        var value: Double {
            switch self {
            case .half(let bits): return Double(Float16(bitPattern: bits))
            case .float(let bits): return Double(Float(bitPattern: bits))
            case .double(let bits): return Double(bitPattern: bits)
            }
        }

        /// Whether `candidate` reads back as this float in its own precision.
        func isSame(_ candidate: Double) -> Bool {
            switch self {
            case .half(let bits): return Float16(candidate) == Float16(bitPattern: bits)
            case .float(let bits): return Float(candidate) == Float(bitPattern: bits)
            case .double(let bits): return candidate == Double(bitPattern: bits)
            }
        }
    }

    /// 2^53: integers below it in magnitude are exact doubles.
    static let exactLimit: Int64 = 1 << 53

    /// An integer value with its transform applied.
    static func integer(_ raw: Int64, _ transform: ProfileFieldTransform) -> JSONValue {
        switch transform {
        case .none:
            return .integer(raw)
        case .map(let names):
            guard let name = names[raw] else { return .integer(raw) }
            return .string(name)
        case .scale(let numerator, let denominator):
            return .number(ratio(raw, times: numerator, over: denominator) ?? Double(raw) * Double(numerator) / Double(denominator))
        case .bits(let mask, let asBool):
            return bits(UInt64(bitPattern: raw), mask: mask, asBool: asBool)
        case .subtractedFrom(let minuend):
            let (difference, overflow) = minuend.subtractingReportingOverflow(raw)
            return overflow ? .number(Double(minuend) - Double(raw)) : .integer(difference)
        }
    }

    /// The bits of `mask` in `raw`: whether any is set, or their value shifted down to the mask's
    /// lowest bit.
    static func bits(_ raw: UInt64, mask: UInt64, asBool: Bool) -> JSONValue {
        let selected = raw & mask
        if asBool { return .bool(selected != 0) }
        let shifted = selected >> UInt64(mask.trailingZeroBitCount)
        return shifted <= UInt64(Int64.max) ? .integer(Int64(shifted)) : .number(Double(shifted))
    }

    /// A `Q` value above `Int64.max`: no map can name it, and JSON integers stop at `Int64.max`.
    static func hugeUnsigned(_ raw: UInt64, _ transform: ProfileFieldTransform) -> JSONValue {
        switch transform {
        case .none, .map:
            return .number(Double(raw))
        case .scale(let numerator, let denominator):
            return .number(Double(raw) * Double(numerator) / Double(denominator))
        case .bits(let mask, let asBool):
            return bits(raw, mask: mask, asBool: asBool)
        case .subtractedFrom(let minuend):
            return .number(Double(minuend) - Double(raw))
        }
    }

    /// A float value with its scale applied (maps are refused for floats when compiled); `null`
    /// when it is not finite.
    static func floatingPoint(_ float: FloatingPoint, _ transform: ProfileFieldTransform) -> JSONValue {
        let value = float.value
        guard value.isFinite else { return .null }
        let decimal = shortestDecimal(float)
        guard case .scale(let numerator, let denominator) = transform else {
            guard let (mantissa, digits) = decimal else { return .number(value) }
            return .number(Double(mantissa) / IEEE11073.powerOfTen(digits))
        }
        if let (mantissa, digits) = decimal {
            let (bigDenominator, overflow) = denominator.multipliedReportingOverflow(
                by: Int64(IEEE11073.powerOfTen(digits)))
            if !overflow, let result = ratio(mantissa, times: numerator, over: bigDenominator) {
                return .number(result)
            }
        }
        // A float too large or too small for a decimal: scaled in doubles. Multiplying first can
        // overflow where dividing first does not (1e308 × 10 / 100); a result that is still not
        // finite is null, as a non-finite float is (found by scripts/fuzz profile-decode).
        var scaled = value * Double(numerator) / Double(denominator)
        if !scaled.isFinite { scaled = value / Double(denominator) * Double(numerator) }
        return scaled.isFinite ? .number(scaled) : .null
    }

    /// `raw × numerator / denominator` rounded once, when the product and the denominator are exact
    /// doubles; else `nil`.
    static func ratio(_ raw: Int64, times numerator: Int64, over denominator: Int64) -> Double? {
        let (product, overflow) = raw.multipliedReportingOverflow(by: numerator)
        guard !overflow, product.magnitude <= exactLimit.magnitude, denominator <= exactLimit else { return nil }
        return Double(product) / Double(denominator)
    }

    /// The float as `mantissa / 10^digits` with the fewest fraction digits that read back as the
    /// same float; `nil` when none up to 17 digits fits an exact double (huge or tiny values).
    static func shortestDecimal(_ float: FloatingPoint) -> (mantissa: Int64, digits: Int)? {
        let value = float.value
        let limit = Double(exactLimit)
        guard abs(value) < limit else { return nil }
        var power = 1.0
        for digits in 0...17 {
            let mantissa = (value * power).rounded()
            guard abs(mantissa) < limit else { return nil }
            if float.isSame(mantissa / power) { return (Int64(mantissa), digits) }
            power *= 10
        }
        return nil
    }
}
