extension ProfileStruct {
    /// A named field of a decode.
    public struct Field: Sendable, Hashable {
        /// The value name (SPEC §7/§13: `temperature`, `battery`...). A name starting with `_` is
        /// decoded (for ``ProfileStruct/Bits``) but not published.
        public var name: String
        /// What is done with the value.
        public var transform: ProfileFieldTransform
        /// Raw integer values that mean "no value" (iBBQ's unplugged probe, -10 as `h`; 0xFFFF):
        /// the value is then left out of the object ("absent, never null"). Compared before the
        /// transform.
        public var absentIf: [Int64]
        /// The raw values that are values (Airthings radon 0…16383); any other leaves the value
        /// out, as ``absentIf`` does. Compared before the transform.
        public var valid: ClosedRange<Double>?

        /// Creates a field.
        public init(
            _ name: String, _ transform: ProfileFieldTransform = .none, absentIf: [Int64] = [],
            valid: ClosedRange<Double>? = nil
        ) {
            self.name = name
            self.transform = transform
            self.absentIf = absentIf
            self.valid = valid
        }

        /// Whether the value is published (its name does not start with `_`).
        public var isPublished: Bool { !name.hasPrefix("_") }
    }

    /// Values derived from the bits of one integer field (`bits: { mode_flags: { manual: "&0x01?",
    /// boost: "&0x04?" } }`): each derived value is published right after the field (which is
    /// itself published unless its name starts with `_`), and is absent when the field is.
    public struct Bits: Sendable, Hashable {
        /// The integer field the bits are taken from (its raw value, before its transform).
        public var field: String
        /// The derived values, in order: usually ``ProfileFieldTransform/bits(mask:asBool:)``, any
        /// integer transform allowed; no `absentIf` or `valid`.
        public var values: [Field]

        /// Creates derived values of `field`.
        public init(field: String, values: [Field]) {
            self.field = field
            self.values = values
        }
    }

    /// A struct of one numeric value repeated over the payload (iBBQ's 2, 4 or 6 probes): the
    /// items are named `NAME_1`, `NAME_2`... after the one field. A payload shorter than one item
    /// is refused; items past ``limit`` and a partial last item are ignored.
    public struct Repeat: Sendable, Hashable {
        /// The most items decoded (and the value names a profile can publish: `NAME_1…NAME_limit`).
        public var limit: Int

        /// The largest limit.
        public static let maxLimit = 256

        /// Creates a repetition of at most `limit` items.
        public init(limit: Int) {
            self.limit = limit
        }
    }

    /// Checks `fields` (and the derived values) against `layout`'s items and returns each item's
    /// derived values.
    static func check(
        layout: ProfileStructLayout, fields: [Field], bits: [Bits], repeating: Repeat?
    ) throws(ProfileCodecError) -> [[Field]] {
        guard layout.items.count == fields.count else {
            let values = layout.items.count
            throw ProfileCodecError(
                .fieldCount,
                "struct \"\(layout.format)\" has \(values) value\(values == 1 ? "" : "s") (codes other than 'x') "
                    + "but \(fields.count) field\(fields.count == 1 ? " is" : "s are") named: "
                    + "name one field per value, in order")
        }
        var seen = Set<String>()
        for (item, field) in zip(layout.items, fields) {
            guard !field.name.isEmpty else { throw ProfileCodecError(.badField, "a field has an empty name") }
            guard seen.insert(field.name).inserted else {
                throw ProfileCodecError(.badField, "field '\(field.name)' is named twice")
            }
            try check(field.transform, of: field.name, item)
            if !field.absentIf.isEmpty, !item.isInteger {
                throw ProfileCodecError(
                    .badTransform,
                    "field '\(field.name)' is '\(item.code)' (\(kindName(item.kind))): absent_if applies only to integers (use valid for floats)")
            }
            if field.valid != nil, !item.isInteger, !item.isFloatingPoint {
                throw ProfileCodecError(
                    .badTransform,
                    "field '\(field.name)' is '\(item.code)' (\(kindName(item.kind))): valid applies only to numbers")
            }
        }
        if let repeating {
            guard layout.items.count == 1, let item = layout.items.first, item.isInteger || item.isFloatingPoint else {
                throw ProfileCodecError(
                    .badFormat,
                    "repeat needs a struct of one number, such as \"<h\" (\"\(layout.format)\" has \(layout.items.count) values)")
            }
            guard (1...Repeat.maxLimit).contains(repeating.limit) else {
                throw ProfileCodecError(.badField, "repeat: the limit \(repeating.limit) is not in 1…\(Repeat.maxLimit)")
            }
            guard bits.isEmpty else {
                throw ProfileCodecError(.badField, "bits cannot be used with repeat")
            }
        }
        var derived = Array(repeating: [Field](), count: fields.count)
        for group in bits {
            guard let index = fields.firstIndex(where: { $0.name == group.field }) else {
                throw ProfileCodecError(.badField, "bits of '\(group.field)': the struct has no field of that name")
            }
            let item = layout.items[index]
            guard item.isInteger else {
                throw ProfileCodecError(
                    .badTransform,
                    "bits of '\(group.field)': it is '\(item.code)' (\(kindName(item.kind))), bits apply only to integers")
            }
            for value in group.values {
                guard !value.name.isEmpty else { throw ProfileCodecError(.badField, "a value of bits has an empty name") }
                guard seen.insert(value.name).inserted else {
                    throw ProfileCodecError(.badField, "field '\(value.name)' is named twice")
                }
                guard value.absentIf.isEmpty, value.valid == nil else {
                    throw ProfileCodecError(
                        .badField, "'\(value.name)': absent_if and valid apply to the struct's fields, not to bits")
                }
                try check(value.transform, of: value.name, item)
            }
            derived[index].append(contentsOf: group.values)
        }
        return derived
    }

    /// Refuses a transform that `item` cannot take.
    static func check(_ transform: ProfileFieldTransform, of name: String, _ item: ProfileStructLayout.Item)
        throws(ProfileCodecError)
    {
        switch transform {
        case .none:
            break
        case .scale(let numerator, let denominator):
            guard item.isInteger || item.isFloatingPoint else {
                throw ProfileCodecError(
                    .badTransform,
                    "field '\(name)' is '\(item.code)' (\(kindName(item.kind))): a scale applies only to numbers")
            }
            guard numerator != 0, denominator > 0,
                numerator.magnitude <= ProfileFieldTransform.maxScaleTerm.magnitude,
                denominator <= ProfileFieldTransform.maxScaleTerm
            else {
                throw ProfileCodecError(.badTransform, "field '\(name)': the scale \(numerator)/\(denominator) is not usable")
            }
        case .subtractedFrom:
            guard item.isInteger else {
                throw ProfileCodecError(
                    .badTransform,
                    "field '\(name)' is '\(item.code)' (\(kindName(item.kind))): N-x applies only to integers")
            }
        case .map:
            guard item.isInteger else {
                throw ProfileCodecError(
                    .badTransform,
                    "field '\(name)' is '\(item.code)' (\(kindName(item.kind))): a map applies only to integers")
            }
        case .bits(let mask, _):
            guard item.isInteger else {
                throw ProfileCodecError(
                    .badTransform,
                    "field '\(name)' is '\(item.code)' (\(kindName(item.kind))): a mask applies only to integers")
            }
            guard item.size >= 8 || mask >> UInt64(8 * item.size) == 0 else {
                throw ProfileCodecError(
                    .badTransform,
                    "field '\(name)': the mask 0x\(String(mask, radix: 16)) is wider than its \(item.size) byte\(item.size == 1 ? "" : "s")")
            }
        }
    }

    static func kindName(_ kind: ProfileStructLayout.Kind) -> String {
        switch kind {
        case .signed: return "a signed integer"
        case .unsigned: return "an unsigned integer"
        case .half, .float, .double: return "a float"
        case .bool: return "a boolean"
        case .text: return "text"
        }
    }
}

extension ProfileStruct.Field {
    /// Whether `raw` is a value: not one of ``absentIf``, and in ``valid`` when given.
    func accepts(_ raw: ProfileStruct.Raw) -> Bool {
        if !absentIf.isEmpty, case .integer(let value) = raw, absentIf.contains(value) { return false }
        if let valid {
            guard let number = raw.number, valid.contains(number) else { return false }
        }
        return true
    }
}
