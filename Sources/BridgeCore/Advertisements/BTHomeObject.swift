/// One object id of the BTHome v2 format (bthome.io/format): its value name, byte length,
/// signedness, factor and unit. ``all`` is the table the decoder and the encoder both use.
///
/// Names are the snake_case property names of the format's tables (`pm2_5`, `distance_mm`,
/// `uv_index`, ...). Where a binary sensor shares its property name with a sensor, the binary one
/// says what `true` means: 0x10 `power_on`, 0x15 `battery_low`, 0x1C `gas_detected`,
/// 0x20 `moisture_detected`; 0x0F "generic boolean" is `generic_boolean`. Objects that measure the
/// same thing share a name (0x02, 0x45, 0x57 and 0x58 are all `temperature`), as in Home
/// Assistant: a frame with several gets `temperature`, `temperature_2`, ...
public struct BTHomeObject: Sendable, Hashable {
    /// How an object's bytes become values.
    public enum Kind: Sendable, Hashable {
        /// 0x00: uint8, reported as ``DecodedAdvertisement/packetID``, not as a value.
        case packetID
        /// An integer (little endian) times ``BTHomeObject/factor``: an integer value when the
        /// factor is 1, else a number.
        case number
        /// A binary sensor: `false` for 0, `true` otherwise.
        case binary
        /// 0x3A: a button event (`"press"`, `"double_press"`, ..., `"none"`).
        case button
        /// 0x3C: a dimmer event (`"rotate_left"`, `"rotate_right"`, `"none"`) and its step count.
        case dimmer
        /// 0x3B: a length byte (low 5 bits: argument count), an opcode (`"off"`, `"on"`,
        /// `"toggle"`, `"step_up"`, `"step_down"`) and its arguments.
        case command
        /// 0x53: a length byte and UTF-8 text.
        case text
        /// 0x54: a length byte and bytes, as a hex string.
        case raw
        /// 0x50: uint32 seconds since 1970-01-01 UTC, as an integer.
        case timestamp
        /// 0xF1, 0xF2: firmware version, least significant component first: `"4.2.1.0"`.
        case firmwareVersion
    }

    /// The object id.
    public let id: UInt8
    /// The value name.
    public let name: String
    /// The value's byte length; 0 for the objects whose length byte follows the id (text, raw, command).
    public let length: Int
    /// Whether the integer is signed (two's complement).
    public let signed: Bool
    /// The value is `raw × multiplier / divisor` (kept as integers so that `2150 / 100` is exactly
    /// the double nearest 21.5).
    let multiplier: Int64
    let divisor: Int64
    /// The unit (`"°C"`, `"%"`, ...), nil for unitless values.
    public let unit: String?
    /// How the bytes become values.
    public let kind: Kind

    /// The factor applied to the raw integer.
    public var factor: Double { Double(multiplier) / Double(divisor) }

    /// Whether the object has a length byte after its id.
    public var hasLengthByte: Bool { length == 0 }

    init(
        _ id: UInt8, _ name: String, _ length: Int, signed: Bool = false, times multiplier: Int64 = 1,
        over divisor: Int64 = 1, unit: String? = nil, kind: Kind = .number
    ) {
        self.id = id
        self.name = name
        self.length = length
        self.signed = signed
        self.multiplier = multiplier
        self.divisor = divisor
        self.unit = unit
        self.kind = kind
    }

    /// The object with this id, or nil when the id is unknown.
    public static func forID(_ id: UInt8) -> BTHomeObject? {
        byID[Int(id)]
    }

    static let byID: [BTHomeObject?] = {
        var table = [BTHomeObject?](repeating: nil, count: 256)
        for object in all { table[Int(object.id)] = object }
        return table
    }()

    /// Every object id of the BTHome v2 format, in id order.
    public static let all: [BTHomeObject] = [
        BTHomeObject(0x00, "packet_id", 1, kind: .packetID),
        BTHomeObject(0x01, "battery", 1, unit: "%"),
        BTHomeObject(0x02, "temperature", 2, signed: true, over: 100, unit: "°C"),
        BTHomeObject(0x03, "humidity", 2, over: 100, unit: "%"),
        BTHomeObject(0x04, "pressure", 3, over: 100, unit: "hPa"),
        BTHomeObject(0x05, "illuminance", 3, over: 100, unit: "lx"),
        BTHomeObject(0x06, "mass_kg", 2, over: 100, unit: "kg"),
        BTHomeObject(0x07, "mass_lb", 2, over: 100, unit: "lb"),
        BTHomeObject(0x08, "dewpoint", 2, signed: true, over: 100, unit: "°C"),
        BTHomeObject(0x09, "count", 1),
        BTHomeObject(0x0A, "energy", 3, over: 1000, unit: "kWh"),
        BTHomeObject(0x0B, "power", 3, over: 100, unit: "W"),
        BTHomeObject(0x0C, "voltage", 2, over: 1000, unit: "V"),
        BTHomeObject(0x0D, "pm2_5", 2, unit: "µg/m³"),
        BTHomeObject(0x0E, "pm10", 2, unit: "µg/m³"),
        BTHomeObject(0x0F, "generic_boolean", 1, kind: .binary),
        BTHomeObject(0x10, "power_on", 1, kind: .binary),
        BTHomeObject(0x11, "opening", 1, kind: .binary),
        BTHomeObject(0x12, "co2", 2, unit: "ppm"),
        BTHomeObject(0x13, "tvoc", 2, unit: "µg/m³"),
        BTHomeObject(0x14, "moisture", 2, over: 100, unit: "%"),
        BTHomeObject(0x15, "battery_low", 1, kind: .binary),
        BTHomeObject(0x16, "battery_charging", 1, kind: .binary),
        BTHomeObject(0x17, "carbon_monoxide", 1, kind: .binary),
        BTHomeObject(0x18, "cold", 1, kind: .binary),
        BTHomeObject(0x19, "connectivity", 1, kind: .binary),
        BTHomeObject(0x1A, "door", 1, kind: .binary),
        BTHomeObject(0x1B, "garage_door", 1, kind: .binary),
        BTHomeObject(0x1C, "gas_detected", 1, kind: .binary),
        BTHomeObject(0x1D, "heat", 1, kind: .binary),
        BTHomeObject(0x1E, "light", 1, kind: .binary),
        BTHomeObject(0x1F, "lock", 1, kind: .binary),
        BTHomeObject(0x20, "moisture_detected", 1, kind: .binary),
        BTHomeObject(0x21, "motion", 1, kind: .binary),
        BTHomeObject(0x22, "moving", 1, kind: .binary),
        BTHomeObject(0x23, "occupancy", 1, kind: .binary),
        BTHomeObject(0x24, "plug", 1, kind: .binary),
        BTHomeObject(0x25, "presence", 1, kind: .binary),
        BTHomeObject(0x26, "problem", 1, kind: .binary),
        BTHomeObject(0x27, "running", 1, kind: .binary),
        BTHomeObject(0x28, "safety", 1, kind: .binary),
        BTHomeObject(0x29, "smoke", 1, kind: .binary),
        BTHomeObject(0x2A, "sound", 1, kind: .binary),
        BTHomeObject(0x2B, "tamper", 1, kind: .binary),
        BTHomeObject(0x2C, "vibration", 1, kind: .binary),
        BTHomeObject(0x2D, "window", 1, kind: .binary),
        BTHomeObject(0x2E, "humidity", 1, unit: "%"),
        BTHomeObject(0x2F, "moisture", 1, unit: "%"),
        BTHomeObject(0x3A, "button", 1, kind: .button),
        BTHomeObject(0x3B, "command", 0, kind: .command),
        BTHomeObject(0x3C, "dimmer", 2, kind: .dimmer),
        BTHomeObject(0x3D, "count", 2),
        BTHomeObject(0x3E, "count", 4),
        BTHomeObject(0x3F, "rotation", 2, signed: true, over: 10, unit: "°"),
        BTHomeObject(0x40, "distance_mm", 2, unit: "mm"),
        BTHomeObject(0x41, "distance_m", 2, over: 10, unit: "m"),
        BTHomeObject(0x42, "duration", 3, over: 1000, unit: "s"),
        BTHomeObject(0x43, "current", 2, over: 1000, unit: "A"),
        BTHomeObject(0x44, "speed", 2, over: 100, unit: "m/s"),
        BTHomeObject(0x45, "temperature", 2, signed: true, over: 10, unit: "°C"),
        BTHomeObject(0x46, "uv_index", 1, over: 10),
        BTHomeObject(0x47, "volume", 2, over: 10, unit: "L"),
        BTHomeObject(0x48, "volume_ml", 2, unit: "mL"),
        BTHomeObject(0x49, "volume_flow_rate", 2, over: 1000, unit: "m³/h"),
        BTHomeObject(0x4A, "voltage", 2, over: 10, unit: "V"),
        BTHomeObject(0x4B, "gas", 3, over: 1000, unit: "m³"),
        BTHomeObject(0x4C, "gas", 4, over: 1000, unit: "m³"),
        BTHomeObject(0x4D, "energy", 4, over: 1000, unit: "kWh"),
        BTHomeObject(0x4E, "volume", 4, over: 1000, unit: "L"),
        BTHomeObject(0x4F, "water", 4, over: 1000, unit: "L"),
        BTHomeObject(0x50, "timestamp", 4, unit: "s", kind: .timestamp),
        BTHomeObject(0x51, "acceleration", 2, over: 1000, unit: "m/s²"),
        BTHomeObject(0x52, "gyroscope", 2, over: 1000, unit: "°/s"),
        BTHomeObject(0x53, "text", 0, kind: .text),
        BTHomeObject(0x54, "raw", 0, kind: .raw),
        BTHomeObject(0x55, "volume_storage", 4, over: 1000, unit: "L"),
        BTHomeObject(0x56, "conductivity", 2, unit: "µS/cm"),
        BTHomeObject(0x57, "temperature", 1, signed: true, unit: "°C"),
        BTHomeObject(0x58, "temperature", 1, signed: true, times: 35, over: 100, unit: "°C"),
        BTHomeObject(0x59, "count", 1, signed: true),
        BTHomeObject(0x5A, "count", 2, signed: true),
        BTHomeObject(0x5B, "count", 4, signed: true),
        BTHomeObject(0x5C, "power", 4, signed: true, over: 100, unit: "W"),
        BTHomeObject(0x5D, "current", 2, signed: true, over: 1000, unit: "A"),
        BTHomeObject(0x5E, "direction", 2, over: 100, unit: "°"),
        BTHomeObject(0x5F, "precipitation", 2, over: 10, unit: "mm"),
        BTHomeObject(0x60, "channel", 1),
        BTHomeObject(0x61, "rotational_speed", 2, unit: "rpm"),
        BTHomeObject(0x62, "speed", 4, signed: true, over: 1_000_000, unit: "m/s"),
        BTHomeObject(0x63, "acceleration", 4, signed: true, over: 1_000_000, unit: "m/s²"),
        BTHomeObject(0x64, "light_level", 1),
        BTHomeObject(0x65, "settings_revision", 1),
        BTHomeObject(0xF0, "device_type_id", 2),
        BTHomeObject(0xF1, "firmware_version", 4, kind: .firmwareVersion),
        BTHomeObject(0xF2, "firmware_version", 3, kind: .firmwareVersion),
    ]

    /// Button events by code (0x3A); other codes are not reported.
    public static let buttonEvents: [UInt8: String] = [
        0x00: "none", 0x01: "press", 0x02: "double_press", 0x03: "triple_press", 0x04: "long_press",
        0x05: "long_double_press", 0x06: "long_triple_press", 0x80: "hold_press", 0x81: "hold_release",
    ]

    /// Dimmer events by code (0x3C); other codes are not reported.
    public static let dimmerEvents: [UInt8: String] = [0x00: "none", 0x01: "rotate_left", 0x02: "rotate_right"]

    /// Command opcodes (0x3B); other opcodes are not reported.
    public static let commands: [UInt8: String] = [
        0x00: "off", 0x01: "on", 0x02: "toggle", 0x03: "step_up", 0x04: "step_down",
    ]
}
