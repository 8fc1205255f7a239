import CDBus

extension DBusMessageCodec {
    /// Decodes a whole D-Bus message from its wire bytes (`dbus_message_demarshal`, which checks
    /// the header and the body's signature): nil when libdbus refuses them. For fuzzing what any
    /// peer on the bus could send, and for the benchmarks (Benchmarks/ValuePath).
    public static func demarshal(_ bytes: [UInt8]) -> (member: String, arguments: [DBusValue])? {
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
        let member = dbus_message_get_member(message).map { String(cString: $0) } ?? ""
        return (member, arguments(of: message))
    }
}

/// Entry points for fuzzing DBusKit's decoding (the `ble-mqtt-bridge-fuzz` target).
public enum DBusFuzzing {
    /// Decodes `bytes` as a D-Bus message; returns how many arguments came out (nil: refused).
    public static func decodeMessage(_ bytes: [UInt8]) -> Int? {
        DBusMessageCodec.demarshal(bytes)?.arguments.count
    }

    /// A valid message to start from: a PropertiesChanged signal with a `Value` of `bytes`.
    public static func sampleMessage(_ bytes: [UInt8]) -> [UInt8] {
        DBusConnection.initThreads()
        guard let m = dbus_message_new_signal("/org/bluez/hci0/dev_00_11/char0010", "org.freedesktop.DBus.Properties", "PropertiesChanged")
        else { return [] }
        defer { dbus_message_unref(m) }
        // libdbus refuses to demarshal a message with serial 0.
        dbus_message_set_serial(m, 1)
        try? DBusMessageCodec.append(
            [.string("org.bluez.GattCharacteristic1"), .stringVariantDict(["Value": .bytes(bytes)]), .stringArray([])], to: m)
        var raw: UnsafeMutablePointer<CChar>?
        var length: Int32 = 0
        guard dbus_message_marshal(m, &raw, &length) != 0, let raw else { return [] }
        defer { dbus_free(raw) }
        return raw.withMemoryRebound(to: UInt8.self, capacity: Int(length)) { Array(UnsafeBufferPointer(start: $0, count: Int(length))) }
    }
}
