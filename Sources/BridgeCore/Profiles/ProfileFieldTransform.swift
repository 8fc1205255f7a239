/// What a profile decode does with a value before it is published (SPEC §15 `fields`): nothing, a
/// scale, a map from integers to names, or bits of an integer (`&0x03`, `&0x20?`).
public enum ProfileFieldTransform: Sendable, Hashable {
    /// The value as read: integers as JSON integers, floats as numbers, `?` as a boolean, `s` as text.
    case none
    /// `raw × numerator / denominator`, always a JSON number. `/10` is 1/10, `*0.01` is 1/100,
    /// `*2` is 2/1; the fraction is in lowest terms with a positive denominator.
    case scale(numerator: Int64, denominator: Int64)
    /// An integer value's name (`{0: "off", 1: "on"}`); a value the map does not name is published
    /// as the integer itself, so that a firmware's new value is seen rather than dropped.
    case map([Int64: String])
    /// Bits of an integer value: `&0x0c` is `(raw & 0x0c) >> 2` (the mask, shifted down to its
    /// lowest set bit), a JSON integer; `&0x20?` (``asBool``) is whether any bit of the mask is
    /// set, a JSON boolean. A signed value's bits are those of its two's complement.
    case bits(mask: UInt64, asBool: Bool)
    /// `N-x`: the integer `minuend - raw`, for devices that count the other way round (a blind's
    /// 0 = open is Home Assistant's 100 with `100-x`).
    case subtractedFrom(Int64)

    /// The largest numerator or denominator of a scale: both stay exact as doubles.
    static let maxScaleTerm: Int64 = 1 << 53

    /// Parses the text form of a transform: `""` for none, `/` or `*` and a decimal number
    /// (`/10`, `*0.01`, `/100`, `*2`, `*-1`, `/0.5`), or `&` and a mask in hex (`0x` prefix) or
    /// decimal, with `?` for a boolean (`&0x03`, `&0x20?`, `&4?`). Maps are not text: build
    /// ``map(_:)`` from the profile's mapping.
    /// - Throws: ``ProfileCodecError/Code/badTransform`` with the column in `text`.
    public static func parse(_ text: String) throws(ProfileCodecError) -> ProfileFieldTransform {
        let scalars = Array(text.unicodeScalars)
        var index = 0
        while index < scalars.count, ProfileStructLayout.isSpace(scalars[index]) { index += 1 }
        guard index < scalars.count else { return .none }
        let op = scalars[index]
        if op == "&" { return try parseBits(scalars, at: index) }
        if let reflected = parseSubtraction(scalars, at: index) { return reflected }
        guard op == "/" || op == "*" else {
            throw ProfileCodecError(
                .badTransform,
                "a field's transform is empty, a scale such as \"/10\" or \"*0.01\", \"100-x\", bits such as \"&0x03\" or "
                    + "\"&0x20?\", or a map such as {0: \"off\", 1: \"on\"}",
                column: index + 1)
        }
        index += 1
        let numberColumn = index + 1
        var negative = false
        if index < scalars.count, scalars[index] == "-" {
            negative = true
            index += 1
        }
        var mantissa: Int64 = 0
        var fractionDigits = 0
        var digits = 0
        var sawPoint = false
        while index < scalars.count, !ProfileStructLayout.isSpace(scalars[index]) {
            let scalar = scalars[index]
            if scalar == ".", !sawPoint {
                sawPoint = true
            } else if let digit = ProfileStructLayout.digit(scalar) {
                digits += 1
                if sawPoint { fractionDigits += 1 }
                let (times10, o1) = mantissa.multipliedReportingOverflow(by: 10)
                let (next, o2) = times10.addingReportingOverflow(Int64(digit))
                guard !o1, !o2, next < maxScaleTerm, fractionDigits <= 15 else {
                    throw ProfileCodecError(.badTransform, "the scale has too many digits", column: numberColumn)
                }
                mantissa = next
            } else {
                throw ProfileCodecError(
                    .badTransform, "'\(scalar)' in a scale: write a decimal number such as \(op)10 or \(op)0.01",
                    column: index + 1)
            }
            index += 1
        }
        let end = index
        while index < scalars.count, ProfileStructLayout.isSpace(scalars[index]) { index += 1 }
        guard index == scalars.count else {
            throw ProfileCodecError(.badTransform, "unexpected text after the scale", column: index + 1)
        }
        guard digits > 0 else {
            throw ProfileCodecError(
                .badTransform, "'\(op)' needs a number after it, such as \(op)10", column: end + 1)
        }
        guard mantissa != 0 else {
            throw ProfileCodecError(
                .badTransform, op == "/" ? "division by zero" : "a scale of 0 makes every value 0",
                column: numberColumn)
        }
        // value = mantissa / 10^fractionDigits; "/" inverts it.
        let power = Int64(IEEE11073.powerOfTen(fractionDigits))
        var numerator = op == "*" ? mantissa : power
        var denominator = op == "*" ? power : mantissa
        let divisor = gcd(numerator, denominator)
        numerator /= divisor
        denominator /= divisor
        return .scale(numerator: negative ? -numerator : numerator, denominator: denominator)
    }

    /// `&MASK` or `&MASK?` from the `&` at `start`; MASK is hex after `0x` or decimal.
    static func parseBits(_ scalars: [Unicode.Scalar], at start: Int) throws(ProfileCodecError) -> ProfileFieldTransform {
        var index = start + 1
        let maskColumn = index + 1
        var hex = false
        if index + 1 < scalars.count, scalars[index] == "0", scalars[index + 1] == "x" || scalars[index + 1] == "X" {
            hex = true
            index += 2
        }
        var mask: UInt64 = 0
        var digits = 0
        while index < scalars.count, !ProfileStructLayout.isSpace(scalars[index]), scalars[index] != "?" {
            let scalar = scalars[index]
            let digit: UInt64
            if hex, scalar.isASCII, let nibble = Hex.value(of: UInt8(scalar.value)) {
                digit = UInt64(nibble)
            } else if !hex, let decimal = ProfileStructLayout.digit(scalar) {
                digit = UInt64(decimal)
            } else {
                throw ProfileCodecError(
                    .badTransform,
                    "'\(scalar)' in a mask: write \(hex ? "hex digits after 0x" : "a decimal number or hex after 0x"), such as &0x03",
                    column: index + 1)
            }
            let (times, o1) = mask.multipliedReportingOverflow(by: hex ? 16 : 10)
            let (next, o2) = times.addingReportingOverflow(digit)
            guard !o1, !o2 else { throw ProfileCodecError(.badTransform, "the mask is wider than 64 bits", column: maskColumn) }
            mask = next
            digits += 1
            index += 1
        }
        guard digits > 0 else {
            throw ProfileCodecError(.badTransform, "'&' needs a mask after it, such as &0x03 or &0x20?", column: index + 1)
        }
        guard mask != 0 else {
            throw ProfileCodecError(.badTransform, "a mask of 0 selects no bit", column: maskColumn)
        }
        var asBool = false
        if index < scalars.count, scalars[index] == "?" {
            asBool = true
            index += 1
        }
        while index < scalars.count, ProfileStructLayout.isSpace(scalars[index]) { index += 1 }
        guard index == scalars.count else {
            throw ProfileCodecError(.badTransform, "unexpected text after the mask", column: index + 1)
        }
        return .bits(mask: mask, asBool: asBool)
    }

    static func gcd(_ a: Int64, _ b: Int64) -> Int64 {
        var (a, b) = (a, b)
        while b != 0 { (a, b) = (b, a % b) }
        return a
    }

    /// `N-x` (spaces allowed around `-`; N a decimal integer, optionally negative) from `start`; nil
    /// when the text is not of that form.
    static func parseSubtraction(_ scalars: [Unicode.Scalar], at start: Int) -> ProfileFieldTransform? {
        var index = start
        var negative = false
        if index < scalars.count, scalars[index] == "-" {
            negative = true
            index += 1
        }
        var minuend: Int64 = 0
        var digits = 0
        while index < scalars.count, let digit = ProfileStructLayout.digit(scalars[index]) {
            let (times10, o1) = minuend.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.addingReportingOverflow(Int64(digit))
            guard !o1, !o2, next < maxScaleTerm else { return nil }
            minuend = next
            digits += 1
            index += 1
        }
        guard digits > 0 else { return nil }
        while index < scalars.count, ProfileStructLayout.isSpace(scalars[index]) { index += 1 }
        guard index < scalars.count, scalars[index] == "-" else { return nil }
        index += 1
        while index < scalars.count, ProfileStructLayout.isSpace(scalars[index]) { index += 1 }
        guard index < scalars.count, scalars[index] == "x" else { return nil }
        index += 1
        while index < scalars.count, ProfileStructLayout.isSpace(scalars[index]) { index += 1 }
        guard index == scalars.count else { return nil }
        return .subtractedFrom(negative ? -minuend : minuend)
    }
}
