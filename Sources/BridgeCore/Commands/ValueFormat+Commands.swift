/// What the command parsers need to know about a format.
extension ValueFormat {
    /// Whether values in this format are JSON objects (so a bare object payload can be the value).
    var takesObjectValue: Bool { self == .heartRateMeasurement }

    /// What a bare payload in this format looks like, for messages.
    var bareExample: String {
        switch self {
        case .hex: return "hex bytes such as 01ff"
        case .utf8: return "text"
        case .uint8, .uint16, .uint32, .batteryLevel, .bodySensorLocation: return "an integer such as 42"
        case .sint8, .sint16, .sint32: return "an integer such as -3"
        case .float32, .float64, .sfloat, .float, .temperature, .humidity: return "a number such as 21.5"
        case .heartRateMeasurement: return "a JSON object such as {\"bpm\":72}"
        }
    }
}
