/// A Characteristic Presentation Format descriptor (0x2904, Core Vol 3 Part G 3.3.3.5): how a
/// peripheral says its characteristic's value is to be read when no `format` is configured
/// (SPEC §11, "Self-describing characteristics").
///
/// Seven bytes: the format code, the exponent (sint8), the unit (a 16-bit `org.bluetooth.unit`
/// UUID, 0x27xx), the namespace (0x01: Bluetooth SIG) and the description (uint16). The value
/// of an integer format is the number × 10^exponent; the unit picks the Home Assistant unit and
/// device class (``PresentationUnit``).
public struct PresentationFormat: Sendable, Hashable {
    /// The UUID of the descriptor.
    public static let descriptorUUID = BluetoothUUID(uuid16: 0x2904)

    /// The format code.
    public var format: Code
    /// The decimal exponent of integer formats.
    public var exponent: Int8
    /// The `org.bluetooth.unit` UUID (0x2700: unitless).
    public var unit: UInt16
    /// The namespace of ``descriptionCode`` (0x01: Bluetooth SIG).
    public var namespace: UInt8
    /// The description (for the SIG namespace: "first", "left", ...); not used by the bridge.
    public var descriptionCode: UInt16

    /// Creates a presentation format.
    public init(format: Code, exponent: Int8 = 0, unit: UInt16 = 0x2700, namespace: UInt8 = 1, descriptionCode: UInt16 = 0) {
        self.format = format
        self.exponent = exponent
        self.unit = unit
        self.namespace = namespace
        self.descriptionCode = descriptionCode
    }

    /// Parses a descriptor value; `nil` unless it is exactly seven bytes with a known format code
    /// (RFU codes say nothing the bridge can use).
    public init?(descriptor bytes: some Collection<UInt8>) {
        let b = Array(bytes)
        guard b.count == 7, let code = Code(rawValue: b[0]) else { return nil }
        self.init(
            format: code, exponent: Int8(bitPattern: b[1]), unit: UInt16(b[2]) | UInt16(b[3]) << 8, namespace: b[4],
            descriptionCode: UInt16(b[5]) | UInt16(b[6]) << 8)
    }

    /// Whether the format says something a value can be decoded by: everything but the opaque
    /// ``Code/structure`` and ``Code/medASN1`` (a characteristic keeps its configured or SIG
    /// format then).
    public var isUsable: Bool { format != .structure && format != .medASN1 }

    /// Whether values decode to JSON numbers.
    public var isNumeric: Bool {
        switch format {
        case .boolean, .duint16, .utf8s, .utf16s, .structure, .medASN1: return false
        default: return true
        }
    }

    /// Whether ``exponent`` applies: to integer formats only (Core Vol 3 Part G 3.3.3.5.3); the
    /// IEEE 754 and IEEE 11073 floats carry their own exponent.
    public var appliesExponent: Bool {
        switch format {
        case .float32, .float64, .sfloat, .float, .boolean, .utf8s, .utf16s, .structure, .medASN1: return false
        default: return true
        }
    }

    /// What the unit is in Home Assistant, if it has an equivalent.
    public var homeAssistantUnit: PresentationUnit? { PresentationUnit.forUnit(unit) }

    /// The format codes of the Bluetooth assigned numbers (2.4.1 "Formats"). Multi-octet values
    /// are little endian; formats shorter than an octet sit in the low bits of one octet.
    public enum Code: UInt8, Sendable, Hashable, CaseIterable {
        case boolean = 0x01
        case twoBit = 0x02
        case nibble = 0x03
        case uint8 = 0x04
        case uint12 = 0x05
        case uint16 = 0x06
        case uint24 = 0x07
        case uint32 = 0x08
        case uint48 = 0x09
        case uint64 = 0x0A
        case uint128 = 0x0B
        case sint8 = 0x0C
        case sint12 = 0x0D
        case sint16 = 0x0E
        case sint24 = 0x0F
        case sint32 = 0x10
        case sint48 = 0x11
        case sint64 = 0x12
        case sint128 = 0x13
        /// IEEE 754 binary32.
        case float32 = 0x14
        /// IEEE 754 binary64.
        case float64 = 0x15
        /// IEEE 11073-20601 16-bit SFLOAT (medfloat16).
        case sfloat = 0x16
        /// IEEE 11073-20601 32-bit FLOAT (medfloat32).
        case float = 0x17
        /// Two uint16 (IEEE 20601 format).
        case duint16 = 0x18
        /// UTF-8 string.
        case utf8s = 0x19
        /// UTF-16 string (little endian).
        case utf16s = 0x1A
        /// Opaque structure.
        case structure = 0x1B
        /// IEEE 11073 ASN.1 (medASN1).
        case medASN1 = 0x1C

        /// The integer formats: (size in octets, value bits, signed).
        var integerLayout: (bytes: Int, bits: Int, signed: Bool)? {
            switch self {
            case .twoBit: return (1, 2, false)
            case .nibble: return (1, 4, false)
            case .uint8: return (1, 8, false)
            case .uint12: return (2, 12, false)
            case .uint16: return (2, 16, false)
            case .uint24: return (3, 24, false)
            case .uint32: return (4, 32, false)
            case .uint48: return (6, 48, false)
            case .uint64: return (8, 64, false)
            case .uint128: return (16, 128, false)
            case .sint8: return (1, 8, true)
            case .sint12: return (2, 12, true)
            case .sint16: return (2, 16, true)
            case .sint24: return (3, 24, true)
            case .sint32: return (4, 32, true)
            case .sint48: return (6, 48, true)
            case .sint64: return (8, 64, true)
            case .sint128: return (16, 128, true)
            default: return nil
            }
        }
    }
}
