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
public struct ProfileStruct: Sendable, Hashable {
    /// A named field of a decode.
    public struct Field: Sendable, Hashable {
        /// The value name (SPEC §7/§13: `temperature`, `battery`...).
        public var name: String
        /// What is done with the value.
        public var transform: ProfileFieldTransform

        /// Creates a field.
        public init(_ name: String, _ transform: ProfileFieldTransform = .none) {
            self.name = name
            self.transform = transform
        }
    }

    /// Where the values are in the payload.
    public let layout: ProfileStructLayout
    /// One field per value of the layout, in order.
    public let fields: [Field]

    /// Parses `format` and assigns `fields` to its values (every code but `x`), in order.
    /// - Throws: ``ProfileCodecError`` ``Code/badFormat`` (with the column in `format`),
    ///   ``Code/fieldCount``, ``Code/badField``, ``Code/badTransform``.
    public init(format: String, fields: [Field]) throws(ProfileCodecError) {
        try self.init(layout: ProfileStructLayout(format), fields: fields)
    }

    /// Assigns `fields` to the values of `layout`, in order.
    /// - Throws: ``ProfileCodecError`` ``Code/fieldCount`` when the counts differ, ``Code/badField``
    ///   for an empty or repeated name, ``Code/badTransform`` for a transform its value cannot
    ///   take (a scale or map on text or a boolean, a map on a float).
    public init(layout: ProfileStructLayout, fields: [Field]) throws(ProfileCodecError) {
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
            switch field.transform {
            case .none:
                break
            case .scale:
                guard item.isInteger || item.isFloatingPoint else {
                    throw ProfileCodecError(
                        .badTransform,
                        "field '\(field.name)' is '\(item.code)' (\(Self.kindName(item.kind))): a scale applies only to numbers")
                }
            case .map:
                guard item.isInteger else {
                    throw ProfileCodecError(
                        .badTransform,
                        "field '\(field.name)' is '\(item.code)' (\(Self.kindName(item.kind))): a map applies only to integers")
                }
            }
            if case .scale(let numerator, let denominator) = field.transform {
                guard numerator != 0, denominator > 0,
                    numerator.magnitude <= ProfileFieldTransform.maxScaleTerm.magnitude,
                    denominator <= ProfileFieldTransform.maxScaleTerm
                else {
                    throw ProfileCodecError(
                        .badTransform, "field '\(field.name)': the scale \(numerator)/\(denominator) is not usable")
                }
            }
        }
        self.layout = layout
        self.fields = fields
    }

    /// The bytes a payload needs.
    public var size: Int { layout.size }

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
            for index in layout.items.indices {
                let item = layout.items[index]
                let field = fields[index]
                values.append(field.name, Self.value(item, in: bytes, little: little, field.transform))
            }
        }
    }

    static func value(
        _ item: ProfileStructLayout.Item, in bytes: UnsafeBufferPointer<UInt8>, little: Bool,
        _ transform: ProfileFieldTransform
    ) -> JSONValue {
        switch item.kind {
        case .text:
            return text(UnsafeBufferPointer(rebasing: bytes[item.offset..<item.offset + item.size]))
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
            return ProfileNumbers.integer(Int64(bitPattern: bits << shift) >> shift, transform)
        case .unsigned:
            guard bits <= UInt64(Int64.max) else { return ProfileNumbers.hugeUnsigned(bits, transform) }
            return ProfileNumbers.integer(Int64(bits), transform)
        case .half:
            return ProfileNumbers.floatingPoint(.half(UInt16(truncatingIfNeeded: bits)), transform)
        case .float:
            return ProfileNumbers.floatingPoint(.float(UInt32(truncatingIfNeeded: bits)), transform)
        default:
            return ProfileNumbers.floatingPoint(.double(bits), transform)
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
