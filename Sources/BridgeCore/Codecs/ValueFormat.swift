/// How a characteristic's bytes map to the `"value"` of its payload, and back for writes.
///
/// Config names (`format:` in `bridge.yaml`) are the raw values. Integer and
/// float formats are little endian, as on the Bluetooth wire.
public enum ValueFormat: String, Sendable, Hashable, CaseIterable {
    /// Lowercase hex string (`"01ff"`); the default when nothing else applies.
    case hex
    /// UTF-8 text (trailing NUL bytes are dropped).
    case utf8
    /// Unsigned 8-bit integer.
    case uint8
    /// Unsigned 16-bit integer, little endian.
    case uint16
    /// Unsigned 32-bit integer, little endian.
    case uint32
    /// Signed 8-bit integer.
    case sint8
    /// Signed 16-bit integer, little endian.
    case sint16
    /// Signed 32-bit integer, little endian.
    case sint32
    /// IEEE 754 binary32, little endian.
    case float32
    /// IEEE 754 binary64, little endian.
    case float64
    /// IEEE 11073-20601 16-bit SFLOAT (4-bit exponent, 12-bit mantissa).
    case sfloat
    /// IEEE 11073-20601 32-bit FLOAT (8-bit exponent, 24-bit mantissa).
    case float
    /// Heart Rate Measurement (0x2A37): `{"bpm", "contact"?, "energy"?, "rr"?}`.
    case heartRateMeasurement = "heart_rate_measurement"
    /// Battery Level (0x2A19): integer percent.
    case batteryLevel = "battery_level"
    /// Temperature (0x2A6E): sint16 in 0.01 °C, decoded to °C.
    case temperature
    /// Humidity (0x2A6F): uint16 in 0.01 %, decoded to %.
    case humidity
    /// Body Sensor Location (0x2A38): its integer code.
    case bodySensorLocation = "body_sensor_location"

    /// The SIG-defined format of a characteristic UUID, ``hex`` for unknown ones.
    public static func `default`(for uuid: BluetoothUUID) -> ValueFormat {
        switch uuid.uuid16 {
        case 0x2A37: return .heartRateMeasurement
        case 0x2A19: return .batteryLevel
        case 0x2A6E: return .temperature
        case 0x2A6F: return .humidity
        case 0x2A38: return .bodySensorLocation
        // Device Information strings: model, serial, firmware, hardware, software, manufacturer.
        case .some(0x2A24...0x2A29): return .utf8
        default: return .hex
        }
    }

    /// The config names of all formats, for messages.
    public static var allNames: [String] { allCases.map(\.rawValue) }
}
