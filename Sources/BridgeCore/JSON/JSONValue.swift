/// A JSON value.
///
/// Numbers have two cases: ``integer(_:)`` for integral values that fit an
/// `Int64` (written without a fraction) and ``number(_:)`` for everything else.
/// The parser produces ``integer(_:)`` for number literals without fraction and
/// exponent that fit, ``number(_:)`` otherwise. Equality is structural:
/// `.integer(1) != .number(1.0)`, and object member order matters.
public enum JSONValue: Sendable, Hashable {
    /// `null`
    case null
    /// `true` / `false`
    case bool(Bool)
    /// An integral number, written without a fraction.
    case integer(Int64)
    /// A floating-point number. Non-finite values are written as `null`.
    case number(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, members in order.
    case object(JSONObject)
}

extension JSONValue {
    /// The member named `key` of an object (the last one if the key repeats), else `nil`.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let object) = self else { return nil }
        return object[key]
    }

    /// The string of a ``string(_:)``, else `nil`.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value of a ``bool(_:)``, else `nil`.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    /// The value of an ``integer(_:)``, or of a ``number(_:)`` that is integral and fits `Int64`, else `nil`.
    public var int64Value: Int64? {
        switch self {
        case .integer(let value):
            return value
        case .number(let value):
            guard value.isFinite, value.rounded(.towardZero) == value,
                value >= -9_223_372_036_854_775_808.0, value < 9_223_372_036_854_775_808.0
            else { return nil }
            return Int64(value)
        default:
            return nil
        }
    }

    /// The value of a number (either case) as a `Double`, else `nil`.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    /// The elements of an ``array(_:)``, else `nil`.
    public var arrayValue: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    /// The object of an ``object(_:)``, else `nil`.
    public var objectValue: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    /// Whether this is ``null``.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// A short name of the kind of value, for messages: `"null"`, `"boolean"`, `"number"`, `"string"`, `"array"`, `"object"`.
    public var kindName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer, .number: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }

    /// The compact JSON text of this value as UTF-8 bytes.
    public var jsonBytes: [UInt8] {
        var buffer: [UInt8] = []
        JSONWriter.append(self, to: &buffer)
        return buffer
    }

    /// The compact JSON text of this value.
    public var jsonString: String {
        String(decoding: jsonBytes, as: UTF8.self)
    }
}

extension JSONValue: CustomStringConvertible {
    /// The compact JSON text.
    public var description: String { jsonString }
}

extension JSONValue: ExpressibleByNilLiteral {
    /// `nil` is ``null``.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: ExpressibleByBooleanLiteral {
    /// A ``bool(_:)``.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByIntegerLiteral {
    /// An ``integer(_:)``.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension JSONValue: ExpressibleByFloatLiteral {
    /// A ``number(_:)``.
    public init(floatLiteral value: Double) { self = .number(value) }
}

extension JSONValue: ExpressibleByStringLiteral {
    /// A ``string(_:)``.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension JSONValue: ExpressibleByArrayLiteral {
    /// An ``array(_:)``.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: ExpressibleByDictionaryLiteral {
    /// An ``object(_:)`` with the members in literal order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements.map { JSONObject.Member(key: $0.0, value: $0.1) }))
    }
}
