import CDBus

extension DBusMessageCodec {
    /// Decodes a whole D-Bus message from its wire bytes (`dbus_message_demarshal`, which checks
    /// the header and the body's signature): nil when libdbus refuses them. For fuzzing what any
    /// peer on the bus could send, and for the benchmarks (Benchmarks/ValuePath).
    public static func demarshal(_ bytes: [UInt8]) -> (member: String, arguments: [DBusValue])? {
        withMessage(bytes) { message in
            (dbus_message_get_member(message).map { String(cString: $0) } ?? "", arguments(of: message))
        }
    }

    /// Reads a whole D-Bus message's arguments in place (``DBusArgumentReader``) from its wire
    /// bytes: nil when libdbus refuses them. For fuzzing and the benchmarks.
    public static func read<R>(_ bytes: [UInt8], _ body: (DBusArgumentReader) -> R) -> R? {
        withMessage(bytes) { body(DBusArgumentReader(message: $0)) }
    }

    private static func withMessage<R>(_ bytes: [UInt8], _ body: (OpaquePointer) -> R) -> R? {
        DBusConnection.initThreads()
        var error = DBusError_C()
        dbus_error_init(&error)
        let message: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                dbus_message_demarshal(chars.baseAddress, Int32(clamping: chars.count), &error)
            }
        }
        dbus_error_free(&error)
        guard let message else { return nil }
        defer { dbus_message_unref(message) }
        return body(message)
    }
}

/// Entry points for fuzzing DBusKit's decoding (the `ble-mqtt-bridge-fuzz` target).
public enum DBusFuzzing {
    /// Decodes `bytes` as a D-Bus message; returns how many arguments came out (nil: refused).
    ///
    /// The same bytes are then read in place (``DBusArgumentReader``, the advertisement hot
    /// path): every argument walked element by element, and each one's ``DBusArgumentReader/value()``
    /// must equal what the decoder made of it, or the process traps (a finding).
    public static func decodeMessage(_ bytes: [UInt8]) -> Int? {
        guard let decoded = DBusMessageCodec.demarshal(bytes)?.arguments else { return nil }
        let read: [DBusValue]? = DBusMessageCodec.read(bytes) { start in
            var args = start
            var out: [DBusValue] = []
            while !args.isEnd {
                walk(args, depth: 0)
                out.append(args.value())
                args.next()
            }
            return out
        }
        precondition(read == decoded, "DBusArgumentReader read \(String(describing: read)), the decoder \(decoded)")
        return decoded.count
    }

    /// Visits every element below `reader` with each accessor (none may crash or misread).
    private static func walk(_ reader: DBusArgumentReader, depth: Int) {
        _ = (reader.kind, reader.string(), reader.int16(), reader.uint16(), reader.byte(), reader.bytes())
        _ = reader.stringEquals("org.bluez.Device1")
        guard depth < 64 else { return }
        var child = reader.children()
        while !child.isEnd {
            walk(child, depth: depth + 1)
            child.next()
        }
    }

    /// A valid message to start from: a PropertiesChanged signal with a `Value` of `bytes`.
    public static func sampleMessage(_ bytes: [UInt8]) -> [UInt8] {
        signalBytes(
            path: "/org/bluez/hci0/dev_00_11/char0010", interface: "org.freedesktop.DBus.Properties",
            member: "PropertiesChanged",
            arguments: [.string("org.bluez.GattCharacteristic1"), .stringVariantDict(["Value": .bytes(bytes)]), .stringArray([])])
    }

    /// The wire bytes of a signal as a peer sends it (serial 1: libdbus refuses to demarshal a
    /// message with serial 0); empty when the names or values cannot be marshalled.
    public static func signalBytes(path: String, interface: String, member: String, arguments: [DBusValue]) -> [UInt8] {
        DBusConnection.initThreads()
        do {
            try DBusMessageCodec.validatePath(path)
            try DBusMessageCodec.validateInterface(interface)
            try DBusMessageCodec.validateMember(member)
        } catch {
            return []
        }
        guard let m = dbus_message_new_signal(path, interface, member) else { return [] }
        defer { dbus_message_unref(m) }
        dbus_message_set_serial(m, 1)
        guard (try? DBusMessageCodec.append(arguments, to: m)) != nil else { return [] }
        var raw: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(m, &raw, &length) != 0, let raw else { return [] }
        defer { dbus_free(raw) }
        return raw.withMemoryRebound(to: UInt8.self, capacity: Int(length)) { Array(UnsafeBufferPointer(start: $0, count: Int(length))) }
    }
}
