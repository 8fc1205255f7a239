/// What Home Assistant needs to show one kind of measured value: device class, unit, state
/// class, entity category and, for enumerations, the options.
///
/// The one table behind every sensor entity the bridge announces: GATT characteristics look
/// their kind up through ``init(format:)``, advertisement decoders through ``named(_:)`` with the
/// value's key (`temperature`, `humidity`, `battery`, …). Adding a measured quantity is one row.
public struct HomeAssistantSensorKind: Sendable, Hashable {
    /// The kind's key: a value name in advertisement payloads, the entity's default name.
    public var key: String
    /// The entity's display name.
    public var name: String
    /// `device_class`.
    public var deviceClass: String?
    /// `unit_of_measurement`.
    public var unit: String?
    /// `state_class` (`measurement`, `total_increasing`), `nil` for text and enumerations.
    public var stateClass: String?
    /// `entity_category` (`diagnostic` for battery and signal strength).
    public var entityCategory: String?
    /// `icon` where no device class gives one.
    public var icon: String?
    /// For `device_class: enum`: the option for each integer code.
    public var options: [String]?
    /// `suggested_display_precision`.
    public var precision: Int?

    /// Creates a kind.
    public init(
        key: String, name: String, deviceClass: String? = nil, unit: String? = nil, stateClass: String? = "measurement",
        entityCategory: String? = nil, icon: String? = nil, options: [String]? = nil, precision: Int? = nil
    ) {
        self.key = key
        self.name = name
        self.deviceClass = deviceClass
        self.unit = unit
        self.stateClass = stateClass
        self.entityCategory = entityCategory
        self.icon = icon
        self.options = options
        self.precision = precision
    }

    /// The table, by key.
    public static let table: [String: HomeAssistantSensorKind] = {
        let rows: [HomeAssistantSensorKind] = [
            .init(key: "battery", name: "Battery", deviceClass: "battery", unit: "%", entityCategory: "diagnostic"),
            .init(key: "temperature", name: "Temperature", deviceClass: "temperature", unit: "°C", precision: 2),
            .init(key: "humidity", name: "Humidity", deviceClass: "humidity", unit: "%", precision: 1),
            .init(key: "heart_rate", name: "Heart rate", unit: "bpm", icon: "mdi:heart-pulse"),
            .init(
                key: "body_sensor_location", name: "Body sensor location", deviceClass: "enum", stateClass: nil,
                icon: "mdi:human-handsup", options: bodySensorLocations),
            .init(key: "pressure", name: "Pressure", deviceClass: "pressure", unit: "hPa", precision: 1),
            .init(key: "illuminance", name: "Illuminance", deviceClass: "illuminance", unit: "lx"),
            .init(key: "voltage", name: "Voltage", deviceClass: "voltage", unit: "V", precision: 3),
            .init(key: "co2", name: "CO2", deviceClass: "carbon_dioxide", unit: "ppm"),
            .init(key: "moisture", name: "Moisture", deviceClass: "moisture", unit: "%"),
            // SPEC §13's value names, with the device classes and units Home Assistant accepts for them.
            .init(key: "conductivity", name: "Conductivity", deviceClass: "conductivity", unit: "µS/cm"),
            .init(key: "pm2_5", name: "PM2.5", deviceClass: "pm25", unit: "µg/m³"),
            .init(key: "pm10", name: "PM10", deviceClass: "pm10", unit: "µg/m³"),
            // Home Assistant has no formaldehyde class, and `volatile_organic_compounds` (a total of
            // compounds, not one) takes only µg/m³: no device class, so that mg/m³ is accepted as it is.
            .init(key: "formaldehyde", name: "Formaldehyde", unit: "mg/m³", icon: "mdi:molecule", precision: 3),
            .init(key: "tvoc", name: "TVOC", deviceClass: "volatile_organic_compounds", unit: "µg/m³"),
            .init(key: "weight", name: "Weight", deviceClass: "weight", unit: "kg", precision: 2),
            .init(key: "tank_level", name: "Tank level", deviceClass: "distance", unit: "mm", icon: "mdi:propane-tank"),
            .init(key: "dew_point", name: "Dew point", deviceClass: "temperature", unit: "°C", precision: 2),
            // No acceleration class in Home Assistant: a plain measurement in m/s².
            .init(key: "acceleration_x", name: "Acceleration X", unit: "m/s²", icon: "mdi:axis-x-arrow", precision: 2),
            .init(key: "acceleration_y", name: "Acceleration Y", unit: "m/s²", icon: "mdi:axis-y-arrow", precision: 2),
            .init(key: "acceleration_z", name: "Acceleration Z", unit: "m/s²", icon: "mdi:axis-z-arrow", precision: 2),
            .init(key: "movement_counter", name: "Movement counter", icon: "mdi:run"),
            // temperature_probe_1 … _6 (the `_N` suffix is dropped to find the row).
            .init(key: "temperature_probe", name: "Temperature probe", deviceClass: "temperature", unit: "°C", precision: 1),
            .init(key: "battery_voltage", name: "Battery voltage", deviceClass: "voltage", unit: "V", precision: 2),
            .init(key: "battery_current", name: "Battery current", deviceClass: "current", unit: "A", precision: 3),
            .init(key: "state_of_charge", name: "State of charge", deviceClass: "battery", unit: "%", precision: 1),
            .init(key: "solar_power", name: "Solar power", deviceClass: "power", unit: "W"),
            // A daily total that restarts at 0: `total_increasing` (Home Assistant's energy
            // dashboard takes it, and reads the drop to 0 as a new cycle), not `measurement`,
            // which Home Assistant refuses for the energy class.
            .init(key: "yield_today", name: "Yield today", deviceClass: "energy", unit: "kWh", stateClass: "total_increasing", precision: 2),
            .init(key: "rssi", name: "Signal strength", deviceClass: "signal_strength", unit: "dBm", entityCategory: "diagnostic"),
        ]
        return Dictionary(uniqueKeysWithValues: rows.map { ($0.key, $0) })
    }()

    /// Body Sensor Location (0x2A38) codes 0–6, as the Heart Rate Service names them.
    public static let bodySensorLocations = ["Other", "Chest", "Wrist", "Finger", "Hand", "Ear Lobe", "Foot"]

    /// The row for `key`, if the table has one.
    public static func named(_ key: String) -> HomeAssistantSensorKind? { table[key] }

    /// The kind of a characteristic decoded with `format`: a table row for SIG formats, a plain
    /// measurement for numbers, `nil` for text and hex (no unit, no state class).
    public init?(format: ValueFormat) {
        switch format {
        case .batteryLevel: self = Self.table["battery"]!
        case .temperature: self = Self.table["temperature"]!
        case .humidity: self = Self.table["humidity"]!
        case .heartRateMeasurement: self = Self.table["heart_rate"]!
        case .bodySensorLocation: self = Self.table["body_sensor_location"]!
        case .uint8, .uint16, .uint32, .sint8, .sint16, .sint32, .float32, .float64, .sfloat, .float:
            self.init(key: format.rawValue, name: format.rawValue)
        case .utf8, .hex:
            return nil
        }
    }
}

extension HomeAssistantSensorKind {
    /// The kind of a characteristic decoded by its presentation format (0x2904): the unit and
    /// device class of ``PresentationUnit``, a display precision from a negative exponent; `nil`
    /// for formats that do not decode to numbers.
    public init?(presentation: PresentationFormat) {
        guard presentation.isNumeric else { return nil }
        let unit = presentation.homeAssistantUnit
        let key = unit?.deviceClass ?? "value"
        self.init(
            key: key, name: unit?.deviceClass.map(Self.displayName) ?? "Value", deviceClass: unit?.deviceClass,
            unit: unit?.unit, stateClass: unit?.stateClass ?? "measurement",
            precision: presentation.appliesExponent && presentation.exponent < 0 ? -Int(presentation.exponent) : nil)
    }

    /// `sound_pressure` → `Sound pressure`.
    static func displayName(_ deviceClass: String) -> String {
        let words = deviceClass.split(separator: "_").joined(separator: " ")
        return words.prefix(1).uppercased() + words.dropFirst()
    }
}
