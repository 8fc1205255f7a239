import Testing

@testable import BridgeCore

@Suite struct PresentationFormatTests {
    typealias Code = PresentationFormat.Code

    /// The JSON of `bytes` decoded by `code` with `exponent` (hex where they do not fit).
    func json(_ code: Code, _ exponent: Int8, _ bytes: [UInt8]) -> String {
        PresentationFormat(format: code, exponent: exponent).decode(bytes).jsonString
    }

    // MARK: Parsing the descriptor

    @Test func parsesTheSevenBytes() throws {
        // sint16, exponent -2, °C (0x272F), SIG namespace, description 0x0106 ("outside").
        let cpf = try #require(PresentationFormat(descriptor: [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x06, 0x01]))
        #expect(cpf.format == .sint16)
        #expect(cpf.exponent == -2)
        #expect(cpf.unit == 0x272F)
        #expect(cpf.namespace == 1)
        #expect(cpf.descriptionCode == 0x0106)
        #expect(cpf.homeAssistantUnit?.unit == "°C")
        #expect(cpf.homeAssistantUnit?.deviceClass == "temperature")
    }

    @Test(arguments: [
        [] as [UInt8],
        [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x00],  // six bytes
        [0x0E, 0xFE, 0x2F, 0x27, 0x01, 0x00, 0x00, 0x00],  // eight bytes
        [0x00, 0x00, 0x2F, 0x27, 0x01, 0x00, 0x00],  // format 0: RFU
        [0x1D, 0x00, 0x2F, 0x27, 0x01, 0x00, 0x00],  // past the last assigned format
        [0xFF, 0x00, 0x00, 0x27, 0x01, 0x00, 0x00],
    ])
    func malformedDescriptorsAreIgnored(bytes: [UInt8]) {
        #expect(PresentationFormat(descriptor: bytes) == nil)
    }

    @Test func everyAssignedCodeParses() {
        for code in Code.allCases {
            #expect(PresentationFormat(descriptor: [code.rawValue, 0, 0, 0x27, 1, 0, 0])?.format == code)
        }
        #expect(Code.allCases.count == 28)
        #expect(Code.allCases.map(\.rawValue) == Array(0x01...0x1C))
    }

    @Test func opaqueFormatsAreNotUsable() {
        #expect(!PresentationFormat(format: .structure).isUsable)
        #expect(!PresentationFormat(format: .medASN1).isUsable)
        #expect(PresentationFormat(format: .uint8).isUsable)
        #expect(PresentationFormat(format: .utf16s).isUsable)
    }

    // MARK: Decoding, every format code

    @Test func boolean() {
        #expect(json(.boolean, 0, [0x00]) == "false")
        #expect(json(.boolean, 0, [0x01]) == "true")
        // Bits above the value are ignored on receipt.
        #expect(json(.boolean, 0, [0xFE]) == "false")
        #expect(json(.boolean, 3, [0x03]) == "true")
        #expect(json(.boolean, 0, [0x01, 0x00]) == #""0100""#)
    }

    @Test func subOctetIntegers() {
        #expect(json(.twoBit, 0, [0x03]) == "3")
        #expect(json(.twoBit, 0, [0xFD]) == "1")
        #expect(json(.twoBit, 1, [0x02]) == "20")
        #expect(json(.nibble, 0, [0xAF]) == "15")
        #expect(json(.nibble, -1, [0x07]) == "0.7")
        #expect(json(.nibble, 0, []) == #""""#)
    }

    @Test func unsignedIntegers() {
        #expect(json(.uint8, 0, [0xFF]) == "255")
        #expect(json(.uint8, -1, [0xFF]) == "25.5")
        #expect(json(.uint12, 0, [0xFF, 0xFF]) == "4095")
        #expect(json(.uint12, 2, [0x01, 0x00]) == "100")
        #expect(json(.uint16, 0, [0x34, 0x12]) == "4660")
        #expect(json(.uint16, -2, [0x29, 0x09]) == "23.45")
        #expect(json(.uint24, 0, [0x01, 0x02, 0x03]) == "197121")
        #expect(json(.uint24, -3, [0x40, 0x42, 0x0F]) == "1000.0")
        #expect(json(.uint32, 0, [0xFF, 0xFF, 0xFF, 0xFF]) == "4294967295")
        #expect(json(.uint32, 3, [0x01, 0, 0, 0]) == "1000")
        #expect(json(.uint48, 0, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == "281474976710655")
        #expect(json(.uint48, -6, [0x15, 0xCD, 0x5B, 0x07, 0, 0]) == "123.456789")
        #expect(json(.uint64, 0, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]) == "9223372036854775807")
        // Past Int64: the nearest double.
        #expect(json(.uint64, 0, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == "1.8446744073709552e+19")
        #expect(json(.uint64, -2, [0x0A, 0, 0, 0, 0, 0, 0, 0]) == "0.1")
        #expect(json(.uint128, 0, [0x2A] + Array(repeating: 0, count: 15)) == "42")
        #expect(json(.uint128, 0, Array(repeating: 0xFF, count: 16)) == "3.402823669209385e+38")
        // Correctly rounded from the exact decimal (as strtod and Python's float() round it).
        #expect(json(.uint128, -38, Array(repeating: 0xFF, count: 16)) == "3.4028236692093845")
    }

    @Test func signedIntegers() {
        #expect(json(.sint8, 0, [0x80]) == "-128")
        #expect(json(.sint8, -1, [0xFF]) == "-0.1")
        #expect(json(.sint12, 0, [0xFF, 0x0F]) == "-1")
        #expect(json(.sint12, 0, [0x00, 0x08]) == "-2048")
        #expect(json(.sint12, 0, [0xFF, 0x07]) == "2047")
        // The four bits above the value are ignored.
        #expect(json(.sint12, 0, [0xFF, 0xF7]) == "2047")
        #expect(json(.sint16, -2, [0x29, 0x09]) == "23.45")
        #expect(json(.sint16, -2, [0xD7, 0xF6]) == "-23.45")
        #expect(json(.sint16, 0, [0x00, 0x80]) == "-32768")
        #expect(json(.sint24, 0, [0xFF, 0xFF, 0xFF]) == "-1")
        #expect(json(.sint24, -1, [0x00, 0x00, 0x80]) == "-838860.8")
        #expect(json(.sint32, 0, [0x00, 0x00, 0x00, 0x80]) == "-2147483648")
        #expect(json(.sint32, 2, [0xFE, 0xFF, 0xFF, 0xFF]) == "-200")
        #expect(json(.sint48, 0, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == "-1")
        #expect(json(.sint48, -3, [0x18, 0xFC, 0xFF, 0xFF, 0xFF, 0xFF]) == "-1.0")
        #expect(json(.sint64, 0, [0, 0, 0, 0, 0, 0, 0, 0x80]) == "-9223372036854775808")
        #expect(json(.sint64, 1, [0, 0, 0, 0, 0, 0, 0, 0x80]) == "-9.223372036854776e+19")
        #expect(json(.sint128, 0, Array(repeating: 0xFF, count: 16)) == "-1")
        #expect(json(.sint128, 0, Array(repeating: 0, count: 15) + [0x80]) == "-1.7014118346046923e+38")
        #expect(json(.sint128, -1, [0x85] + Array(repeating: 0xFF, count: 15)) == "-12.3")
    }

    @Test func integersOfTheWrongLengthFallBackToHex() {
        #expect(json(.uint16, 0, [0x01]) == #""01""#)
        #expect(json(.sint16, -2, [0x01, 0x02, 0x03]) == #""010203""#)
        #expect(json(.uint128, 0, [0x01]) == #""01""#)
        #expect(PresentationFormat(format: .sint24).decodeIfValid([0x01, 0x02]) == nil)
    }

    @Test func largeExponents() {
        // Exact to the double: 1 × 10^-30 and 5 × 10^20.
        #expect(json(.uint8, -30, [0x01]) == "1e-30")
        #expect(json(.uint8, 20, [0x05]) == "5e+20")
        #expect(json(.uint8, 18, [0x05]) == "5000000000000000000")
        #expect(json(.sint8, 127, [0x80]) == "-1.28e+129")
        #expect(json(.uint8, -128, [0x00]) == "0.0")
    }

    @Test func floats() {
        // The exponent is for integer formats: floats carry their own.
        #expect(json(.float32, -2, [0x00, 0x00, 0xC0, 0x3F]) == "1.5")
        #expect(json(.float32, 0, [0x00, 0x00, 0xC0, 0x7F]) == "null")
        #expect(json(.float64, 0, [0, 0, 0, 0, 0, 0, 0xF8, 0x3F]) == "1.5")
        #expect(json(.float64, 0, [0, 0, 0, 0, 0, 0, 0xF8]) == #""000000000000f8""#)
        // SFLOAT 0xF16E: mantissa 366, exponent -1.
        #expect(json(.sfloat, 3, [0x6E, 0xF1]) == "36.6")
        #expect(json(.sfloat, 0, [0xFF, 0x07]) == "null")
        // FLOAT: mantissa 366, exponent -1.
        #expect(json(.float, 0, [0x6E, 0x01, 0x00, 0xFF]) == "36.6")
        #expect(json(.float, 0, [0xFF, 0xFF, 0x7F, 0x00]) == "null")
    }

    @Test func duint16() {
        #expect(json(.duint16, 0, [0x78, 0x00, 0x50, 0x00]) == "[120,80]")
        #expect(json(.duint16, -1, [0x78, 0x00, 0x50, 0x00]) == "[12.0,8.0]")
        #expect(json(.duint16, 0, [0x78, 0x00, 0x50]) == #""780050""#)
    }

    @Test func strings() {
        #expect(json(.utf8s, -2, Array("Küche".utf8) + [0, 0]) == #""Küche""#)
        #expect(json(.utf8s, 0, [0xC3]) == #""c3""#)
        // UTF-16 little endian, a surrogate pair included.
        let text = "a€😀"
        let utf16 = text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(json(.utf16s, 0, utf16 + [0, 0]) == #""a€😀""#)
        #expect(json(.utf16s, 0, [0x61]) == #""61""#)
        // An unpaired high surrogate.
        #expect(json(.utf16s, 0, [0x3D, 0xD8]) == #""3dd8""#)
        #expect(json(.utf16s, 0, []) == #""""#)
    }

    @Test func opaqueFormatsAreHex() {
        #expect(json(.structure, 0, [0x01, 0xAB]) == #""01ab""#)
        #expect(json(.medASN1, 0, [0xFF]) == #""ff""#)
    }

    @Test func payloadUsesThePresentationWhenTheBytesFit() {
        let cpf = PresentationFormat(format: .sint16, exponent: -2, unit: 0x272F)
        let payload = ValuePayload.make(raw: [0x29, 0x09], format: .hex, presentation: cpf)
        #expect(String(decoding: payload, as: UTF8.self) == #"{"raw":"2909","value":23.45}"#)
        // Bytes that do not fit: the characteristic's own format.
        let short = ValuePayload.make(raw: [0x29], format: .uint8, presentation: cpf)
        #expect(String(decoding: short, as: UTF8.self) == #"{"raw":"29","value":41}"#)
        let none = ValuePayload.make(raw: [0x29], format: .uint8, presentation: nil)
        #expect(none == short)
    }

    // MARK: Units

    @Test(arguments: [
        (0x272F, "°C", "temperature"), (0x27AC, "°F", "temperature"), (0x2705, "K", "temperature"),
        (0x2724, "Pa", "pressure"), (0x2780, "bar", "pressure"), (0x2728, "V", "voltage"), (0x2704, "A", "current"),
        (0x2726, "W", "power"), (0x27AB, "kWh", "energy"), (0x2731, "lx", "illuminance"),
        (0x27C3, "dB", "sound_pressure"), (0x2701, "m", "distance"), (0x2702, "kg", "weight"),
        (0x2703, "s", "duration"), (0x2722, "Hz", "frequency"), (0x2767, "L", "volume"), (0x27A6, "km/h", "speed"),
        (0x27C8, "VA", "apparent_power"),
    ] as [(UInt16, String, String)])
    func unitsWithADeviceClass(uuid: UInt16, unit: String, deviceClass: String) throws {
        let row = try #require(PresentationUnit.forUnit(uuid))
        #expect(row.unit == unit)
        #expect(row.deviceClass == deviceClass)
    }

    @Test func unitsWithoutADeviceClass() throws {
        for (uuid, unit) in [(0x27AD, "%"), (0x27C4, "ppm"), (0x27C5, "ppb"), (0x2763, "°"), (0x27AF, "bpm")] as [(UInt16, String)] {
            let row = try #require(PresentationUnit.forUnit(uuid))
            #expect(row.unit == unit)
            #expect(row.deviceClass == nil)
        }
        // Unitless, and a unit Home Assistant has no string for.
        #expect(PresentationUnit.forUnit(0x2700) == nil)
        #expect(PresentationUnit.forUnit(0x2786) == nil)
        #expect(PresentationUnit.forUnit(0x1234) == nil)
        // Energy meters count up.
        #expect(PresentationUnit.forUnit(0x27AB)?.stateClass == "total_increasing")
        #expect(PresentationUnit.forUnit(0x272F)?.stateClass == "measurement")
        // Every row is a 0x27xx unit with a unit string.
        for (uuid, row) in PresentationUnit.table {
            #expect(uuid & 0xFF00 == 0x2700 && row.uuid == uuid && !row.unit.isEmpty)
        }
    }

    @Test func sensorKind() throws {
        let kind = try #require(HomeAssistantSensorKind(presentation: PresentationFormat(format: .sint16, exponent: -2, unit: 0x272F)))
        #expect(kind.unit == "°C")
        #expect(kind.deviceClass == "temperature")
        #expect(kind.stateClass == "measurement")
        #expect(kind.precision == 2)
        #expect(kind.name == "Temperature")
        let sound = try #require(HomeAssistantSensorKind(presentation: PresentationFormat(format: .uint8, unit: 0x27C3)))
        #expect(sound.name == "Sound pressure")
        #expect(sound.precision == nil)
        let plain = try #require(HomeAssistantSensorKind(presentation: PresentationFormat(format: .float32, exponent: -1)))
        #expect(plain.unit == nil && plain.deviceClass == nil && plain.precision == nil)
        #expect(HomeAssistantSensorKind(presentation: PresentationFormat(format: .utf8s, unit: 0x272F)) == nil)
        #expect(HomeAssistantSensorKind(presentation: PresentationFormat(format: .boolean)) == nil)
    }

    // MARK: User description

    @Test func userDescription() {
        #expect(UserDescription.name(Array("Outdoor temperature".utf8)) == "Outdoor temperature")
        #expect(UserDescription.name(Array("  Küche \n".utf8) + [0, 0]) == "Küche")
        #expect(UserDescription.name([]) == nil)
        #expect(UserDescription.name([0, 0]) == nil)
        #expect(UserDescription.name([0xC3, 0x28]) == nil)
        #expect(UserDescription.name(Array(repeating: 0x41, count: 100))?.count == UserDescription.maxLength)
    }
}
