/// A profile's `struct` decode (SPEC §15), compiled once: a ``ProfileStructLayout`` and the named
/// fields its values go to, with their transforms. ``decode(_:)`` turns a payload into the
/// `values` object of the device's values topic.
///
/// ```swift
/// let sensors = try ProfileStruct(format: "<hxIBH6x", fields: [
///     .init("temperature", .scale(numerator: 1, denominator: 10)),
///     .init("illuminance"), .init("moisture"), .init("conductivity"),
/// ])
/// try sensors.decode(bytes)  // {"temperature": 23.4, "illuminance": 171, "moisture": 21, "conductivity": 178}
/// ```
///
/// Values: integers as JSON integers (a `Q` above `Int64.max` as a number); floats (`e f d`) as
/// numbers with the fewest decimals that give back the same float (a float 0.58 is 0.58, not
/// 0.5799999833106995), non-finite ones `null`; scaled values as numbers, computed exactly like
/// the BTHome decoder does (one correctly rounded division of exact integers, so 215 `/10` is
/// 21.5, and a float's decimals are scaled as decimals); `?` as booleans; `s` as text without its
/// trailing NULs, or, when that is not valid UTF-8, as the hex of its bytes (as a characteristic
/// of format `utf8` is, SPEC §4).
///
/// Additions (issue 31): a field may leave its value out of the object (``Field/absentIf``,
/// ``Field/valid``); ``Bits`` derive named values from one integer field's bits; a field named
/// `_…` is decoded but not published; ``Repeat`` repeats a one-number struct over the payload.
public struct ProfileStruct: Sendable, Hashable {
    /// Where the values are in the payload.
    public let layout: ProfileStructLayout
    /// One field per value of the layout, in order.
    public let fields: [Field]
    /// The values derived from integer fields' bits.
    public let bits: [Bits]
    /// The repetition of a one-number struct, if any.
    public let repeating: Repeat?
    /// Per field, the values derived from it, in order.
    let derived: [[Field]]

    /// Parses `format` and assigns `fields` to its values (every code but `x`), in order.
    /// - Parameters:
    ///   - bits: values derived from integer fields' bits.
    ///   - repeating: with a format of one number, the items repeated over the payload.
    /// - Throws: ``ProfileCodecError`` ``Code/badFormat`` (with the column in `format`),
    ///   ``Code/fieldCount``, ``Code/badField``, ``Code/badTransform``.
    public init(format: String, fields: [Field], bits: [Bits] = [], repeating: Repeat? = nil) throws(ProfileCodecError) {
        try self.init(layout: ProfileStructLayout(format), fields: fields, bits: bits, repeating: repeating)
    }

    /// Assigns `fields` to the values of `layout`, in order.
    /// - Throws: ``ProfileCodecError`` ``Code/fieldCount`` when the counts differ, ``Code/badField``
    ///   for an empty or repeated name (derived values included), bits of a field that does not
    ///   exist, bits with a repetition; ``Code/badTransform`` for a transform its value cannot
    ///   take (a scale or map on text or a boolean, a map or mask on a float, a mask wider than
    ///   the value), `absentIf` on a value that is not an integer, `valid` on one that is not a
    ///   number; ``Code/badFormat`` for a repetition of a struct that is not one number.
    public init(
        layout: ProfileStructLayout, fields: [Field], bits: [Bits] = [], repeating: Repeat? = nil
    ) throws(ProfileCodecError) {
        derived = try Self.check(layout: layout, fields: fields, bits: bits, repeating: repeating)
        self.layout = layout
        self.fields = fields
        self.bits = bits
        self.repeating = repeating
    }

    /// The bytes a payload needs.
    public var size: Int { layout.size }

    /// The names of the values it may publish, in order: the published fields each followed by
    /// their derived values; `NAME_1…NAME_limit` for a repetition.
    public var valueNames: [String] { valueKinds.map(\.name) }

    /// Decodes `payload` into its named values, in field order. Bytes after the struct are ignored.
    /// - Throws: ``ProfileCodecError/Code/tooShort`` when `payload` is shorter than the struct.
    public func decode(_ payload: [UInt8]) throws(ProfileCodecError) -> JSONObject {
        var values = JSONObject()
        try decode(payload, into: &values)
        return values
    }

    /// Appends the named values of `payload` to `values`, in field order; `values` is unchanged
    /// when the payload is refused.
    /// - Throws: ``ProfileCodecError/Code/tooShort`` when `payload` is shorter than the struct.
    public func decode(_ payload: [UInt8], into values: inout JSONObject) throws(ProfileCodecError) {
        guard payload.count >= layout.size else {
            throw ProfileCodecError(
                .tooShort,
                "payload of \(payload.count) byte\(payload.count == 1 ? "" : "s") is shorter than "
                    + "struct \"\(layout.format)\", which needs \(layout.size)")
        }
        values.members.reserveCapacity(values.members.count + fields.count)
        let little = layout.byteOrder == .little
        payload.withUnsafeBufferPointer { bytes in
            if let repeating, let field = fields.first, let item = layout.items.first {
                guard field.isPublished else { return }
                let count = min(bytes.count / layout.size, repeating.limit)
                for index in 0..<count {
                    var shifted = item
                    shifted.offset += index * layout.size
                    let raw = Self.raw(shifted, in: bytes, little: little)
                    guard field.accepts(raw) else { continue }
                    values.append("\(field.name)_\(index + 1)", raw.value(field.transform))
                }
                return
            }
            for index in layout.items.indices {
                let field = fields[index]
                let raw = Self.raw(layout.items[index], in: bytes, little: little)
                guard field.accepts(raw) else { continue }
                if field.isPublished { values.append(field.name, raw.value(field.transform)) }
                for value in derived[index] where value.isPublished {
                    values.append(value.name, raw.value(value.transform))
                }
            }
        }
    }

    /// A value as read, before its transform.
    enum Raw {
        case integer(Int64)
        case hugeUnsigned(UInt64)
        case floatingPoint(ProfileNumbers.FloatingPoint)
        case bool(Bool)
        case text(JSONValue)

        /// The value with `transform` applied.
        func value(_ transform: ProfileFieldTransform) -> JSONValue {
            switch self {
            case .integer(let raw): ProfileNumbers.integer(raw, transform)
            case .hugeUnsigned(let raw): ProfileNumbers.hugeUnsigned(raw, transform)
            case .floatingPoint(let raw): ProfileNumbers.floatingPoint(raw, transform)
            case .bool(let raw): .bool(raw)
            case .text(let text): text
            }
        }

        /// The value as a number, for `valid`.
        var number: Double? {
            switch self {
            case .integer(let raw): Double(raw)
            case .hugeUnsigned(let raw): Double(raw)
            case .floatingPoint(let raw): raw.value
            case .bool, .text: nil
            }
        }
    }

    static func raw(_ item: ProfileStructLayout.Item, in bytes: UnsafeBufferPointer<UInt8>, little: Bool) -> Raw {
        switch item.kind {
        case .text:
            return .text(text(UnsafeBufferPointer(rebasing: bytes[item.offset..<item.offset + item.size])))
        case .bool:
            return .bool(bytes[item.offset] != 0)
        case .signed, .unsigned, .half, .float, .double:
            break
        }
        var bits: UInt64 = 0
        if little {
            var j = item.size
            while j > 0 {
                j -= 1
                bits = bits << 8 | UInt64(bytes[item.offset + j])
            }
        } else {
            for j in 0..<item.size { bits = bits << 8 | UInt64(bytes[item.offset + j]) }
        }
        switch item.kind {
        case .signed:
            let shift = UInt64(64 - 8 * item.size)
            return .integer(Int64(bitPattern: bits << shift) >> shift)
        case .unsigned:
            guard bits <= UInt64(Int64.max) else { return .hugeUnsigned(bits) }
            return .integer(Int64(bits))
        case .half:
            return .floatingPoint(.half(UInt16(truncatingIfNeeded: bits)))
        case .float:
            return .floatingPoint(.float(UInt32(truncatingIfNeeded: bits)))
        default:
            return .floatingPoint(.double(bits))
        }
    }

    /// Text without its trailing NULs, or the hex of its bytes when it is not valid UTF-8.
    static func text(_ bytes: UnsafeBufferPointer<UInt8>) -> JSONValue {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0 { end -= 1 }
        let text = UnsafeBufferPointer(rebasing: bytes[0..<end])
        guard UTF8Validation.isValid(buffer: text) else { return .string(Hex.encode(bytes)) }
        return .string(String(decoding: text, as: UTF8.self))
    }
}
