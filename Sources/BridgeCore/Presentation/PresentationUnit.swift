/// A Bluetooth unit (`org.bluetooth.unit.*`, the 0x27xx UUIDs of a presentation format) as Home
/// Assistant shows it: the unit string of `homeassistant.const` and, where Home Assistant has
/// one that accepts that unit, the sensor device class.
///
/// Units without a Home Assistant equivalent (mole, candela, becquerel, …) are not in the table:
/// their values are published all the same, with no unit in Home Assistant. Device classes are
/// only those long in Home Assistant (an unknown class makes it reject the whole entity).
public struct PresentationUnit: Sendable, Hashable {
    /// The Bluetooth unit UUID.
    public var uuid: UInt16
    /// `unit_of_measurement`.
    public var unit: String
    /// `device_class`, when one accepts ``unit``.
    public var deviceClass: String?
    /// `state_class`: `measurement`, or `total_increasing` for energy meters.
    public var stateClass: String

    /// Creates a row.
    public init(_ uuid: UInt16, _ unit: String, _ deviceClass: String? = nil, stateClass: String = "measurement") {
        self.uuid = uuid
        self.unit = unit
        self.deviceClass = deviceClass
        self.stateClass = stateClass
    }

    /// The row of a unit UUID; `nil` for unitless (0x2700) and units Home Assistant has no string for.
    public static func forUnit(_ uuid: UInt16) -> PresentationUnit? { table[uuid] }

    /// The table, by unit UUID.
    public static let table: [UInt16: PresentationUnit] = {
        let rows: [PresentationUnit] = [
            // SI base units
            .init(0x2701, "m", "distance"),
            .init(0x2702, "kg", "weight"),
            .init(0x2703, "s", "duration"),
            .init(0x2704, "A", "current"),
            .init(0x2705, "K", "temperature"),
            .init(0x2706, "mol"),
            .init(0x2707, "cd"),
            // Derived units
            .init(0x2710, "m²"),
            .init(0x2711, "m³", "volume"),
            .init(0x2712, "m/s", "speed"),
            .init(0x2713, "m/s²"),
            .init(0x2715, "kg/m³"),
            .init(0x271B, "kg/m³"),
            .init(0x271C, "cd/m²"),
            .init(0x2720, "rad"),
            .init(0x2721, "sr"),
            .init(0x2722, "Hz", "frequency"),
            .init(0x2723, "N"),
            .init(0x2724, "Pa", "pressure"),
            .init(0x2725, "J"),
            .init(0x2726, "W", "power"),
            .init(0x2727, "C"),
            .init(0x2728, "V", "voltage"),
            .init(0x2729, "F"),
            .init(0x272A, "Ω"),
            .init(0x272B, "S"),
            .init(0x272C, "Wb"),
            .init(0x272D, "T"),
            .init(0x272E, "H"),
            .init(0x272F, "°C", "temperature"),
            .init(0x2730, "lm"),
            .init(0x2731, "lx", "illuminance"),
            .init(0x2732, "Bq"),
            .init(0x2733, "Gy"),
            .init(0x2734, "Sv"),
            .init(0x2735, "kat"),
            .init(0x2740, "Pa·s"),
            .init(0x2741, "N·m"),
            .init(0x2743, "rad/s"),
            .init(0x2744, "rad/s²"),
            .init(0x2745, "W/m²", "irradiance"),
            .init(0x2749, "W/(m·K)"),
            .init(0x274B, "V/m"),
            // Units accepted for use with the SI
            .init(0x2760, "min", "duration"),
            .init(0x2761, "h", "duration"),
            .init(0x2762, "d", "duration"),
            .init(0x2763, "°"),
            .init(0x2766, "ha"),
            .init(0x2767, "L", "volume"),
            .init(0x2768, "t"),
            .init(0x2780, "bar", "pressure"),
            .init(0x2781, "mmHg", "pressure"),
            .init(0x2782, "Å"),
            .init(0x2783, "nmi"),
            .init(0x2785, "kn", "speed"),
            // Other units
            .init(0x27A0, "yd", "distance"),
            .init(0x27A2, "in", "distance"),
            .init(0x27A3, "ft", "distance"),
            .init(0x27A4, "mi", "distance"),
            .init(0x27A5, "psi", "pressure"),
            .init(0x27A6, "km/h", "speed"),
            .init(0x27A7, "mph", "speed"),
            .init(0x27A8, "rpm"),
            .init(0x27A9, "cal"),
            .init(0x27AA, "kcal"),
            .init(0x27AB, "kWh", "energy", stateClass: "total_increasing"),
            .init(0x27AC, "°F", "temperature"),
            .init(0x27AD, "%"),
            .init(0x27AE, "‰"),
            .init(0x27AF, "bpm"),
            .init(0x27B0, "Ah"),
            .init(0x27B1, "mg/dL"),
            .init(0x27B2, "mmol/L"),
            .init(0x27B6, "W/m²", "irradiance"),
            .init(0x27B8, "lb", "weight"),
            .init(0x27BA, "steps/min"),
            .init(0x27C1, "g/s"),
            .init(0x27C2, "L/s"),
            .init(0x27C3, "dB", "sound_pressure"),
            .init(0x27C4, "ppm"),
            .init(0x27C5, "ppb"),
            .init(0x27C7, "kVAh"),
            .init(0x27C8, "VA", "apparent_power"),
        ]
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.uuid, $0) })
    }()
}
