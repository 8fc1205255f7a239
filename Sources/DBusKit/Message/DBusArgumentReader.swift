import CDBus

/// Reads a message's arguments where they are, without building ``DBusValue``s: for signals
/// that arrive a thousand times a second and are mostly the same few numbers and bytes
/// (BlueZ's advertisement reports). A reader stands on one argument; ``next()`` moves it to the
/// following one, ``children()`` gives a reader on the first element of a container.
///
/// A reader points into its message: use it only inside the handler it was given to
/// (``DBusConnection/addSignalHandler(_:onEnd:peek:_:)``), never keep it.
public struct DBusArgumentReader {
    /// What a reader stands on.
    public enum Kind: Sendable, Equatable {
        /// Past the last argument (or element).
        case end
        case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double, unixFD
        case string, objectPath, signature
        case array, variant, structure, dictEntry
    }

    private var iter: DBusMessageIter
    private var type: Int32

    /// A reader on the first argument of `message`.
    init(message: OpaquePointer) {
        iter = DBusMessageIter()
        type = dbus_message_iter_init(message, &iter) != 0
            ? dbus_message_iter_get_arg_type(&iter) : Int32(CDBUS_TYPE_INVALID)
    }

    private init(iter: DBusMessageIter) {
        self.iter = iter
        type = dbus_message_iter_get_arg_type(&self.iter)
    }

    /// What the reader stands on.
    public var kind: Kind {
        switch type {
        case Int32(CDBUS_TYPE_BYTE): .byte
        case Int32(CDBUS_TYPE_BOOLEAN): .boolean
        case Int32(CDBUS_TYPE_INT16): .int16
        case Int32(CDBUS_TYPE_UINT16): .uint16
        case Int32(CDBUS_TYPE_INT32): .int32
        case Int32(CDBUS_TYPE_UINT32): .uint32
        case Int32(CDBUS_TYPE_INT64): .int64
        case Int32(CDBUS_TYPE_UINT64): .uint64
        case Int32(CDBUS_TYPE_DOUBLE): .double
        case Int32(CDBUS_TYPE_UNIX_FD): .unixFD
        case Int32(CDBUS_TYPE_STRING): .string
        case Int32(CDBUS_TYPE_OBJECT_PATH): .objectPath
        case Int32(CDBUS_TYPE_SIGNATURE): .signature
        case Int32(CDBUS_TYPE_ARRAY): .array
        case Int32(CDBUS_TYPE_VARIANT): .variant
        case Int32(CDBUS_TYPE_STRUCT): .structure
        case Int32(CDBUS_TYPE_DICT_ENTRY): .dictEntry
        default: .end
        }
    }

    /// Whether the reader is past the last argument or element.
    public var isEnd: Bool { type == Int32(CDBUS_TYPE_INVALID) }

    /// Moves to the next argument or element.
    public mutating func next() {
        guard !isEnd else { return }
        dbus_message_iter_next(&iter)
        type = dbus_message_iter_get_arg_type(&iter)
    }

    /// A reader on the first element of the array, the value of the variant, the first field of
    /// the structure or the key of the dictionary entry the reader stands on; an ended reader on
    /// anything else (and on an empty array).
    public func children() -> DBusArgumentReader {
        var copy = iter
        var sub = DBusMessageIter()
        switch type {
        case Int32(CDBUS_TYPE_ARRAY), Int32(CDBUS_TYPE_VARIANT), Int32(CDBUS_TYPE_STRUCT), Int32(CDBUS_TYPE_DICT_ENTRY):
            dbus_message_iter_recurse(&copy, &sub)
            return DBusArgumentReader(iter: sub)
        default:
            var ended = DBusArgumentReader(iter: iter)
            ended.type = Int32(CDBUS_TYPE_INVALID)
            return ended
        }
    }

    private func cString() -> UnsafePointer<CChar>? {
        guard type == Int32(CDBUS_TYPE_STRING) || type == Int32(CDBUS_TYPE_OBJECT_PATH)
            || type == Int32(CDBUS_TYPE_SIGNATURE)
        else { return nil }
        var copy = iter
        var p: UnsafePointer<CChar>? = nil
        dbus_message_iter_get_basic(&copy, &p)
        return p
    }

    /// The string, object path or signature the reader stands on.
    public func string() -> String? { cString().map { String(cString: $0) } }

    /// Whether the reader stands on a string (or path, or signature) equal to `text`; compares
    /// in place, without making a `String`.
    public func stringEquals(_ text: StaticString) -> Bool {
        guard let p = cString() else { return false }
        let n = text.utf8CodeUnitCount
        return text.withUTF8Buffer { expected in
            // The message's string ends with NUL; it is equal when its first n bytes match and the
            // (n+1)th is the NUL.
            for i in 0..<n where UInt8(bitPattern: p[i]) != expected[i] { return false }
            return p[n] == 0
        }
    }

    private func basic<T: BitwiseCopyable>(_ wanted: Int32, _ zero: T) -> T? {
        guard type == wanted else { return nil }
        var copy = iter
        var v = zero
        withUnsafeMutableBytes(of: &v) { dbus_message_iter_get_basic(&copy, $0.baseAddress) }
        return v
    }

    /// The `int16` the reader stands on.
    public func int16() -> Int16? { basic(Int32(CDBUS_TYPE_INT16), Int16(0)) }

    /// The `uint16` the reader stands on.
    public func uint16() -> UInt16? { basic(Int32(CDBUS_TYPE_UINT16), UInt16(0)) }

    /// The `byte` the reader stands on.
    public func byte() -> UInt8? { basic(Int32(CDBUS_TYPE_BYTE), UInt8(0)) }

    /// Lends the bytes of the byte array (`ay`) the reader stands on; nil for anything else.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard type == Int32(CDBUS_TYPE_ARRAY) else { return nil }
        var copy = iter
        guard dbus_message_iter_get_element_type(&copy) == Int32(CDBUS_TYPE_BYTE) else { return nil }
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&copy, &sub)
        var ptr: UnsafePointer<UInt8>? = nil
        var n: Int32 = 0
        dbus_message_iter_get_fixed_array(&sub, &ptr, &n)
        guard let ptr, n > 0 else { return body(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return body(UnsafeRawBufferPointer(start: ptr, count: Int(n)))
    }

    /// The bytes of the byte array (`ay`) the reader stands on.
    public func bytes() -> [UInt8]? { withBytes { Array($0) } }

    /// The argument the reader stands on, decoded whole (``DBusValue/structure(_:)`` of nothing
    /// past the end).
    public func value() -> DBusValue {
        guard !isEnd else { return .structure([]) }
        var copy = iter
        return DBusMessageCodec.decode(&copy, type: type)
    }
}

extension DBusArgumentReader {
    /// Marshals `values` into a signal and lends a reader on its first argument (tests).
    static func over<R>(_ values: [DBusValue], _ body: (DBusArgumentReader) -> R) throws(DBusError) -> R {
        guard let msg = dbus_message_new_signal("/test", "test.Interface", "Test") else {
            throw DBusError(DBusError.Name.noMemory, "dbus_message_new_signal failed")
        }
        defer { dbus_message_unref(msg) }
        try DBusMessageCodec.append(values, to: msg)
        return body(DBusArgumentReader(message: msg))
    }
}

/// Sees a signal in place before it is decoded (``DBusConnection/addSignalHandler(_:onEnd:peek:_:)``):
/// its object path, interface and member, and a reader on its first argument. Returns true
/// when it took the signal.
public typealias DBusSignalPeek = @Sendable (
    _ path: String, _ interface: String, _ member: String, _ arguments: DBusArgumentReader
) -> Bool
