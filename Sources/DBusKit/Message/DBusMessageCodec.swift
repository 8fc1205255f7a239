import CDBus

/// Marshals ``DBusValue``s into libdbus messages and back. Only this module touches libdbus; the one
/// public entry is ``demarshal(_:)`` (wire bytes → values), for the fuzzer and the benchmarks.
public enum DBusMessageCodec {
    // MARK: Validation (libdbus aborts the process on invalid names: check first)

    static func validatePath(_ path: String) throws(DBusError) {
        guard dbus_validate_path(path, nil) != 0 else {
            throw DBusError(DBusError.Name.invalidArgs, "invalid object path '\(path)'")
        }
    }

    static func validateInterface(_ name: String) throws(DBusError) {
        guard dbus_validate_interface(name, nil) != 0 else {
            throw DBusError(DBusError.Name.invalidArgs, "invalid interface name '\(name)'")
        }
    }

    static func validateMember(_ name: String) throws(DBusError) {
        guard dbus_validate_member(name, nil) != 0 else {
            throw DBusError(DBusError.Name.invalidArgs, "invalid member name '\(name)'")
        }
    }

    static func validateBusName(_ name: String) throws(DBusError) {
        guard dbus_validate_bus_name(name, nil) != 0 else {
            throw DBusError(DBusError.Name.invalidArgs, "invalid bus name '\(name)'")
        }
    }

    static func validateErrorName(_ name: String) -> Bool {
        dbus_validate_error_name(name, nil) != 0
    }

    /// Checks that a value (recursively) can be marshalled: valid paths and signatures,
    /// array elements that match the declared signature.
    static func validate(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .objectPath(let p):
            try validatePath(p)
        case .signature(let s):
            guard dbus_signature_validate(s, nil) != 0 else {
                throw DBusError(DBusError.Name.invalidArgs, "invalid signature '\(s)'")
            }
        case .array(let sig, let items):
            guard dbus_signature_validate_single(sig, nil) != 0, sig.first != "{" else {
                throw DBusError(DBusError.Name.invalidArgs, "invalid array element signature '\(sig)'")
            }
            for item in items {
                guard item.signature == sig else {
                    throw DBusError(
                        DBusError.Name.invalidArgs,
                        "array element of type '\(item.signature)' in an array of '\(sig)'")
                }
                try validate(item)
            }
        case .dictionary(let k, let v, let entries):
            guard dbus_signature_validate("a{" + k + v + "}", nil) != 0 else {
                throw DBusError(DBusError.Name.invalidArgs, "invalid dictionary signature a{\(k)\(v)}")
            }
            for e in entries {
                guard e.key.signature == k, e.value.signature == v else {
                    throw DBusError(
                        DBusError.Name.invalidArgs,
                        "dictionary entry {\(e.key.signature)\(e.value.signature)} in a{\(k)\(v)}")
                }
                try validate(e.key)
                try validate(e.value)
            }
        case .structure(let fields):
            guard !fields.isEmpty else {
                throw DBusError(DBusError.Name.invalidArgs, "empty struct")
            }
            for f in fields { try validate(f) }
        case .variant(let inner):
            try validate(inner)
        default:
            break
        }
    }

    // MARK: Encoding

    /// Appends `values` to `message`. Validates first, so libdbus never sees bad input.
    static func append(_ values: [DBusValue], to message: OpaquePointer) throws(DBusError) {
        for v in values { try validate(v) }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(message, &iter)
        for v in values {
            guard append(v, to: &iter) else {
                throw DBusError(DBusError.Name.noMemory, "could not marshal a value of type \(v.signature)")
            }
        }
    }

    private static func appendBasic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ type: Int32, _ value: T) -> Bool {
        withUnsafeBytes(of: value) { dbus_message_iter_append_basic(&iter, type, $0.baseAddress) != 0 }
    }

    private static func appendString(_ iter: inout DBusMessageIter, _ type: Int32, _ s: String) -> Bool {
        s.withCString { p in
            var ptr: UnsafePointer<CChar>? = p
            return dbus_message_iter_append_basic(&iter, type, &ptr) != 0
        }
    }

    private static func container(
        _ iter: inout DBusMessageIter, _ type: Int32, _ sig: String?,
        _ body: (inout DBusMessageIter) -> Bool
    ) -> Bool {
        var sub = DBusMessageIter()
        let opened: Bool
        if let sig {
            opened = sig.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) != 0 }
        } else {
            opened = dbus_message_iter_open_container(&iter, type, nil, &sub) != 0
        }
        guard opened else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iter, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }

    static func append(_ value: DBusValue, to iter: inout DBusMessageIter) -> Bool {
        switch value {
        case .byte(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_BYTE), v)
        case .bool(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_BOOLEAN), dbus_bool_t(v ? 1 : 0))
        case .int16(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_INT16), v)
        case .uint16(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_UINT16), v)
        case .int32(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_INT32), v)
        case .uint32(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_UINT32), v)
        case .int64(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_INT64), v)
        case .uint64(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_UINT64), v)
        case .double(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_DOUBLE), v)
        case .unixFD(let v): return appendBasic(&iter, Int32(CDBUS_TYPE_UNIX_FD), v)
        case .string(let s): return appendString(&iter, Int32(CDBUS_TYPE_STRING), s)
        case .objectPath(let s): return appendString(&iter, Int32(CDBUS_TYPE_OBJECT_PATH), s)
        case .signature(let s): return appendString(&iter, Int32(CDBUS_TYPE_SIGNATURE), s)
        case .bytes(let bytes):
            return container(&iter, Int32(CDBUS_TYPE_ARRAY), "y") { sub in
                bytes.withUnsafeBufferPointer { buf in
                    var base: UnsafePointer<UInt8>? = buf.baseAddress
                    if base == nil {
                        // Empty array: libdbus still wants a valid pointer.
                        var dummy: UInt8 = 0
                        return withUnsafePointer(to: &dummy) { p in
                            var pp: UnsafePointer<UInt8>? = p
                            return dbus_message_iter_append_fixed_array(&sub, Int32(CDBUS_TYPE_BYTE), &pp, 0) != 0
                        }
                    }
                    return dbus_message_iter_append_fixed_array(
                        &sub, Int32(CDBUS_TYPE_BYTE), &base, Int32(buf.count)) != 0
                }
            }
        case .array(let sig, let items):
            return container(&iter, Int32(CDBUS_TYPE_ARRAY), sig) { sub in
                for item in items where !append(item, to: &sub) { return false }
                return true
            }
        case .dictionary(let k, let v, let entries):
            return container(&iter, Int32(CDBUS_TYPE_ARRAY), "{" + k + v + "}") { sub in
                for e in entries {
                    let ok = container(&sub, Int32(CDBUS_TYPE_DICT_ENTRY), nil) { entry in
                        append(e.key, to: &entry) && append(e.value, to: &entry)
                    }
                    if !ok { return false }
                }
                return true
            }
        case .structure(let fields):
            return container(&iter, Int32(CDBUS_TYPE_STRUCT), nil) { sub in
                for f in fields where !append(f, to: &sub) { return false }
                return true
            }
        case .variant(let inner):
            return container(&iter, Int32(CDBUS_TYPE_VARIANT), inner.signature) { sub in
                append(inner, to: &sub)
            }
        }
    }

    // MARK: Decoding

    /// All arguments of `message`.
    static func arguments(of message: OpaquePointer) -> [DBusValue] {
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(message, &iter) != 0 else { return [] }
        var out = [DBusValue]()
        while true {
            let t = dbus_message_iter_get_arg_type(&iter)
            if t == Int32(CDBUS_TYPE_INVALID) { break }
            out.append(decode(&iter, type: t))
            dbus_message_iter_next(&iter)
        }
        return out
    }

    private static func basic<T: BitwiseCopyable>(_ iter: inout DBusMessageIter, _ zero: T) -> T {
        var v = zero
        withUnsafeMutableBytes(of: &v) { dbus_message_iter_get_basic(&iter, $0.baseAddress) }
        return v
    }

    private static func string(_ iter: inout DBusMessageIter) -> String {
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&iter, &p)
        guard let p else { return "" }
        return String(cString: p)
    }

    private static func signature(of iter: inout DBusMessageIter) -> String {
        guard let p = dbus_message_iter_get_signature(&iter) else { return "" }
        defer { dbus_free(p) }
        return String(cString: p)
    }

    static func decode(_ iter: inout DBusMessageIter, type t: Int32) -> DBusValue {
        switch t {
        case Int32(CDBUS_TYPE_BYTE): return .byte(basic(&iter, UInt8(0)))
        case Int32(CDBUS_TYPE_BOOLEAN): return .bool(basic(&iter, dbus_bool_t(0)) != 0)
        case Int32(CDBUS_TYPE_INT16): return .int16(basic(&iter, Int16(0)))
        case Int32(CDBUS_TYPE_UINT16): return .uint16(basic(&iter, UInt16(0)))
        case Int32(CDBUS_TYPE_INT32): return .int32(basic(&iter, Int32(0)))
        case Int32(CDBUS_TYPE_UINT32): return .uint32(basic(&iter, UInt32(0)))
        case Int32(CDBUS_TYPE_INT64): return .int64(basic(&iter, Int64(0)))
        case Int32(CDBUS_TYPE_UINT64): return .uint64(basic(&iter, UInt64(0)))
        case Int32(CDBUS_TYPE_DOUBLE): return .double(basic(&iter, Double(0)))
        case Int32(CDBUS_TYPE_UNIX_FD): return .unixFD(basic(&iter, Int32(-1)))
        case Int32(CDBUS_TYPE_STRING): return .string(string(&iter))
        case Int32(CDBUS_TYPE_OBJECT_PATH): return .objectPath(string(&iter))
        case Int32(CDBUS_TYPE_SIGNATURE): return .signature(string(&iter))
        case Int32(CDBUS_TYPE_VARIANT):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            let it = dbus_message_iter_get_arg_type(&sub)
            return .variant(it == Int32(CDBUS_TYPE_INVALID) ? .structure([]) : decode(&sub, type: it))
        case Int32(CDBUS_TYPE_STRUCT):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields = [DBusValue]()
            while true {
                let ft = dbus_message_iter_get_arg_type(&sub)
                if ft == Int32(CDBUS_TYPE_INVALID) { break }
                fields.append(decode(&sub, type: ft))
                dbus_message_iter_next(&sub)
            }
            return .structure(fields)
        case Int32(CDBUS_TYPE_ARRAY):
            let et = dbus_message_iter_get_element_type(&iter)
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if et == Int32(CDBUS_TYPE_BYTE) {
                var ptr: UnsafePointer<UInt8>? = nil
                var n: Int32 = 0
                dbus_message_iter_get_fixed_array(&sub, &ptr, &n)
                guard let ptr, n > 0 else { return .bytes([]) }
                return .bytes(Array(UnsafeBufferPointer(start: ptr, count: Int(n))))
            }
            let sig = signature(of: &iter)  // "a..."
            let elementSig = String(sig.dropFirst())
            if et == Int32(CDBUS_TYPE_DICT_ENTRY) {
                // elementSig is "{kv}": the key is one basic type character.
                let inner = elementSig.dropFirst().dropLast()
                let keySig = String(inner.prefix(1))
                let valueSig = String(inner.dropFirst())
                var entries = [DBusDictEntry]()
                while dbus_message_iter_get_arg_type(&sub) == Int32(CDBUS_TYPE_DICT_ENTRY) {
                    var entry = DBusMessageIter()
                    dbus_message_iter_recurse(&sub, &entry)
                    let key = decode(&entry, type: dbus_message_iter_get_arg_type(&entry))
                    dbus_message_iter_next(&entry)
                    let value = decode(&entry, type: dbus_message_iter_get_arg_type(&entry))
                    entries.append(DBusDictEntry(key, value))
                    dbus_message_iter_next(&sub)
                }
                return .dictionary(key: keySig, value: valueSig, entries)
            }
            var items = [DBusValue]()
            while true {
                let it = dbus_message_iter_get_arg_type(&sub)
                if it == Int32(CDBUS_TYPE_INVALID) { break }
                items.append(decode(&sub, type: it))
                dbus_message_iter_next(&sub)
            }
            return .array(elementSig, items)
        default:
            return .structure([])
        }
    }

    /// Signature of all arguments of a message.
    static func signature(of message: OpaquePointer) -> String {
        guard let p = dbus_message_get_signature(message) else { return "" }
        return String(cString: p)
    }

    /// Round-trips values through a real libdbus message (used by tests).
    static func roundTrip(_ values: [DBusValue]) throws(DBusError) -> [DBusValue] {
        guard let msg = dbus_message_new_signal("/test", "test.Interface", "Test") else {
            throw DBusError(DBusError.Name.noMemory, "dbus_message_new_signal failed")
        }
        defer { dbus_message_unref(msg) }
        try append(values, to: msg)
        return arguments(of: msg)
    }
}

extension DBusValue {
    /// Marshals `values` into a D-Bus message and reads them back: a check that they survive the wire.
    public static func marshallingRoundTrip(_ values: [DBusValue]) throws(DBusError) -> [DBusValue] {
        try DBusMessageCodec.roundTrip(values)
    }
}
