extension PresentationFormat {
    /// Whether `/set` values are encoded by this format (``encode(_:)``): numbers, booleans and
    /// text; not duint16, struct or medASN1, where the characteristic's own format applies.
    public var encodesValues: Bool {
        switch format {
        case .duint16, .structure, .medASN1: return false
        default: return true
        }
    }

    /// Encodes a `/set` value by this format, the inverse of ``decodeIfValid(_:)``: a number for
    /// the integer formats is divided by 10^``exponent`` and rounded to the nearest step
    /// (`23.45` for sint16 with exponent -2 → `0x0929`); booleans take `true`/`false` (or 0/1);
    /// float32/float64/SFLOAT/FLOAT and utf8s as the formats of those names; utf16s a string.
    /// A value the format cannot hold fails with a message for the command's result.
    public func encode(_ value: JSONValue) -> Result<[UInt8], CommandError> {
        if let layout = format.integerLayout { return Self.integer(value, layout, exponent: Int(exponent), name: name) }
        switch format {
        case .boolean:
            switch value {
            case .bool(let flag): return .success([flag ? 1 : 0])
            case .integer(let i) where i == 0 || i == 1: return .success([UInt8(i)])
            default: return .failure(.invalidPayload("expected true or false for a boolean characteristic, not \(value.kindName)"))
            }
        case .float32: return Self.delegate(value, .float32)
        case .float64: return Self.delegate(value, .float64)
        case .sfloat: return Self.delegate(value, .sfloat)
        case .float: return Self.delegate(value, .float)
        case .utf8s: return Self.delegate(value, .utf8)
        case .utf16s:
            guard case .string(let text) = value else {
                return .failure(.invalidPayload("expected a string for a utf16s characteristic, not \(value.kindName)"))
            }
            return .success(text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        default:
            return .failure(.invalidPayload("the presentation format \(name) takes no values"))
        }
    }

    /// The format's name in messages (`sint16`).
    var name: String { "\(format)" }

    static func delegate(_ value: JSONValue, _ format: ValueFormat) -> Result<[UInt8], CommandError> {
        do {
            return .success(try format.encode(value))
        } catch {
            return .failure(.invalidPayload("the value does not fit the presentation format: \(error.message)"))
        }
    }

    /// `value` / 10^exponent, rounded, as a little-endian integer of `layout`.
    static func integer(
        _ value: JSONValue, _ layout: (bytes: Int, bits: Int, signed: Bool), exponent: Int, name: String
    ) -> Result<[UInt8], CommandError> {
        let raw: Int128
        switch value {
        case .integer(let i) where exponent == 0:
            raw = Int128(i)
        case .integer, .number:
            let number: Double
            if case .integer(let i) = value { number = Double(i) } else if case .number(let d) = value { number = d } else { number = .nan }
            let steps = exponent < 0 ? number * IEEE11073.powerOfTen(-exponent) : number / IEEE11073.powerOfTen(exponent)
            let scaled = steps.rounded()
            guard scaled.isFinite, abs(scaled) < 9.2e18 else {
                return .failure(.invalidPayload("\(String(decoding: value.jsonBytes, as: UTF8.self)) is out of range for \(name)\(exponent == 0 ? "" : " with exponent \(exponent)")"))
            }
            raw = Int128(Int64(scaled))
        default:
            return .failure(.invalidPayload("expected a number for a \(name) characteristic, not \(value.kindName)"))
        }
        let bits = layout.bits
        let low: Int128 = layout.signed ? -(Int128(1) << (bits - 1)) : 0
        let high: Int128 = layout.signed ? (Int128(1) << (bits - 1)) - 1 : (bits >= 127 ? Int128.max : (Int128(1) << bits) - 1)
        guard raw >= low, raw <= high else {
            let scale = exponent == 0 ? "" : " × 10^\(exponent)"
            return .failure(.invalidPayload("\(String(decoding: value.jsonBytes, as: UTF8.self)) is out of range for \(name) (\(low)…\(high)\(scale))"))
        }
        let pattern = UInt128(bitPattern: raw)
        return .success((0..<layout.bytes).map { UInt8(truncatingIfNeeded: pattern >> ($0 * 8)) })
    }
}
