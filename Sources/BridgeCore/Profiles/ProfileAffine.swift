/// The arithmetic of a template placeholder (`{100-position|u8}`, `{temperature*2|u8}`,
/// `{offset*2+7|u8}`): `[INT (+|-)] NAME [(*|/) INT] [(+|-) INT]`, which is
/// `±NAME × numerator / denominator + offset`. Deliberately not an expression language: one
/// name, one factor or divisor, constants before and after.
///
/// The result must be an exact integer: a JSON number with a fraction is taken as the decimal it
/// is written as (21.5 is 215/10), so `{temperature*2|u8}` takes 21.5 (43) and refuses 21.3 (42.6).
public struct ProfileAffine: Sendable, Hashable {
    /// Whether the name's value is subtracted (`100-position`).
    public var negate: Bool
    /// The factor (`*2`); 1 without one.
    public var numerator: Int64
    /// The divisor (`/2`); 1 without one.
    public var denominator: Int64
    /// The constants before and after, summed (`100-position+5`: 105).
    public var offset: Int64
    /// The expression as written in the template (`100-position`), for messages.
    public var text: String

    /// Creates an arithmetic; `numerator` and `denominator` are positive.
    public init(negate: Bool = false, numerator: Int64 = 1, denominator: Int64 = 1, offset: Int64 = 0, text: String) {
        self.negate = negate
        self.numerator = numerator
        self.denominator = denominator
        self.offset = offset
        self.text = text
    }

    /// The result of applying it.
    public enum Outcome: Sendable, Hashable {
        /// The exact integer result.
        case value(Int64)
        /// The result has a fraction (`21.3*2`, `3/2`).
        case notIntegral
        /// The result, or a step of it, does not fit 64 bits.
        case overflow
    }

    /// The result for the value `mantissa / 10^digits`.
    public func apply(mantissa: Int64, digits: Int = 0) -> Outcome {
        var scale: Int64 = 1
        for _ in 0..<max(0, digits) {
            let (next, overflow) = scale.multipliedReportingOverflow(by: 10)
            guard !overflow else { return .overflow }
            scale = next
        }
        let (product, o1) = mantissa.multipliedReportingOverflow(by: numerator)
        let (divisor, o2) = scale.multipliedReportingOverflow(by: denominator)
        guard !o1, !o2 else { return .overflow }
        guard product % divisor == 0 else { return .notIntegral }
        var value = product / divisor
        if negate {
            guard value != .min else { return .overflow }
            value = -value
        }
        let (sum, o3) = value.addingReportingOverflow(offset)
        return o3 ? .overflow : .value(sum)
    }

    /// The value of a JSON number as `mantissa / 10^digits`, the decimal it is written as
    /// (`21.5` is 215 / 10^1); `nil` for anything else, non-finite numbers, and numbers that no
    /// exact decimal of up to 17 fraction digits gives.
    static func decimal(_ value: JSONValue) -> (mantissa: Int64, digits: Int)? {
        if let integer = value.int64Value { return (integer, 0) }
        guard case .number(let number) = value, number.isFinite else { return nil }
        return ProfileNumbers.shortestDecimal(.double(number.bitPattern))
    }
}
