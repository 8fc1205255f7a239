/// A D-Bus signature string such as `"a{sv}"`.
public typealias DBusSignature = String

/// One key/value pair of a D-Bus dictionary (`a{kv}`).
public struct DBusDictEntry: Sendable, Hashable {
    /// The key: always a basic type.
    public var key: DBusValue
    /// The value.
    public var value: DBusValue

    /// Creates an entry.
    public init(_ key: DBusValue, _ value: DBusValue) {
        self.key = key
        self.value = value
    }
}

/// A value of the D-Bus type system.
///
/// Every D-Bus type maps to one case. Arrays of bytes (`ay`) have their own
/// case, ``bytes(_:)``, because they are by far the most common array on
/// BlueZ's API (characteristic values) and are marshalled in one copy.
public indirect enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case bool(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(String)
    case signature(String)
    /// A file descriptor (`h`); only its number is carried.
    case unixFD(Int32)
    /// `ay`
    case bytes([UInt8])
    /// An array whose elements all have `elementSignature` (never `y`: see ``bytes(_:)``;
    /// never a dict entry: see ``dictionary(key:value:_:)``).
    case array(DBusSignature, [DBusValue])
    /// `a{kv}` with the key and value signatures.
    case dictionary(key: DBusSignature, value: DBusSignature, [DBusDictEntry])
    /// `(...)`
    case structure([DBusValue])
    /// `v`
    case variant(DBusValue)

    /// The D-Bus signature of this value.
    public var signature: DBusSignature {
        switch self {
        case .byte: return "y"
        case .bool: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .unixFD: return "h"
        case .bytes: return "ay"
        case .array(let element, _): return "a" + element
        case .dictionary(let k, let v, _): return "a{" + k + v + "}"
        case .structure(let fields): return "(" + fields.map(\.signature).joined() + ")"
        case .variant: return "v"
        }
    }
}

// MARK: - Convenience constructors

extension DBusValue {
    /// An `a{sv}` dictionary from Swift's dictionary (keys sorted, for stable output).
    public static func stringVariantDict(_ dict: [String: DBusValue]) -> DBusValue {
        .dictionary(
            key: "s", value: "v",
            dict.keys.sorted().map { DBusDictEntry(.string($0), .variant(dict[$0]!)) }
        )
    }

    /// An `as` array.
    public static func stringArray(_ strings: [String]) -> DBusValue {
        .array("s", strings.map { .string($0) })
    }

    /// An `ao` array.
    public static func objectPathArray(_ paths: [String]) -> DBusValue {
        .array("o", paths.map { .objectPath($0) })
    }
}

// MARK: - Typed accessors

extension DBusValue {
    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        var v = self
        while case .variant(let inner) = v { v = inner }
        return v
    }

    /// A `s`, `o` or `g` value as text.
    public var string: String? {
        switch unwrapped {
        case .string(let s), .objectPath(let s), .signature(let s): return s
        default: return nil
        }
    }

    /// A `b` value.
    public var bool: Bool? {
        if case .bool(let b) = unwrapped { return b }
        return nil
    }

    /// Any integer type that fits in `Int`.
    public var int: Int? {
        switch unwrapped {
        case .byte(let v): return Int(v)
        case .int16(let v): return Int(v)
        case .uint16(let v): return Int(v)
        case .int32(let v): return Int(v)
        case .uint32(let v): return Int(v)
        case .int64(let v): return Int(v)
        case .uint64(let v): return Int(exactly: v)
        case .unixFD(let v): return Int(v)
        default: return nil
        }
    }

    /// A `d` value, or any integer as a double.
    public var double: Double? {
        if case .double(let d) = unwrapped { return d }
        return int.map(Double.init)
    }

    /// An `ay` value (also an `av`/`ay` spelt as a generic array of bytes).
    public var bytes: [UInt8]? {
        switch unwrapped {
        case .bytes(let b): return b
        case .array(_, let items):
            var out = [UInt8]()
            out.reserveCapacity(items.count)
            for item in items {
                guard case .byte(let b) = item.unwrapped else { return nil }
                out.append(b)
            }
            return out
        default: return nil
        }
    }

    /// The elements of any array (`ay` gives `.byte` elements).
    public var array: [DBusValue]? {
        switch unwrapped {
        case .array(_, let items): return items
        case .bytes(let b): return b.map { .byte($0) }
        default: return nil
        }
    }

    /// An `as` or `ao` value.
    public var strings: [String]? {
        guard let items = array else { return nil }
        var out = [String]()
        out.reserveCapacity(items.count)
        for item in items {
            guard let s = item.string else { return nil }
            out.append(s)
        }
        return out
    }

    /// A dictionary with string (or object path) keys, e.g. `a{sv}` or `a{oa{sa{sv}}}`.
    /// Variant values are kept as they are; use ``unwrapped`` on them.
    public var stringDict: [String: DBusValue]? {
        guard case .dictionary(_, _, let entries) = unwrapped else { return nil }
        var out = [String: DBusValue](minimumCapacity: entries.count)
        for e in entries {
            guard let k = e.key.string else { return nil }
            out[k] = e.value
        }
        return out
    }

    /// The entries of any dictionary.
    public var dictEntries: [DBusDictEntry]? {
        if case .dictionary(_, _, let entries) = unwrapped { return entries }
        return nil
    }

    /// The fields of a struct.
    public var fields: [DBusValue]? {
        if case .structure(let f) = unwrapped { return f }
        return nil
    }
}
