/// How a template placeholder becomes bytes (SPEC §15 `{position|u8}`): an integer in a size and
/// byte order, or the CRC-32 of a text.
public enum ProfileConversion: String, Sendable, Hashable, CaseIterable {
    /// An unsigned byte, 0…255.
    case u8
    /// A signed byte, -128…127.
    case i8
    /// Unsigned 16 bits, little endian.
    case u16le
    /// Unsigned 16 bits, big endian.
    case u16be
    /// Signed 16 bits, little endian.
    case i16le
    /// Signed 16 bits, big endian.
    case i16be
    /// Unsigned 32 bits, little endian (`{unix}`'s conversion).
    case u32le
    /// Unsigned 32 bits, big endian.
    case u32be
    /// Signed 32 bits, little endian.
    case i32le
    /// Signed 32 bits, big endian.
    case i32be
    /// The CRC-32/ISO-HDLC of a text's UTF-8 bytes (``CRC32``), 4 bytes big endian (SwitchBot's password).
    case crc32be
    /// The same CRC, little endian.
    case crc32le

    /// How many bytes it writes.
    public var size: Int {
        switch self {
        case .u8, .i8: return 1
        case .u16le, .u16be, .i16le, .i16be: return 2
        case .u32le, .u32be, .i32le, .i32be, .crc32be, .crc32le: return 4
        }
    }

    /// Whether it takes a text (a CRC) rather than an integer.
    public var isChecksum: Bool { self == .crc32be || self == .crc32le }

    /// Whether it writes the most significant byte first.
    public var isBigEndian: Bool {
        switch self {
        case .u16be, .i16be, .u32be, .i32be, .crc32be: return true
        default: return false
        }
    }

    /// The integers it takes (the CRCs: the range of their result).
    public var range: ClosedRange<Int64> {
        let bits = Int64(8 * size)
        switch self {
        case .i8, .i16le, .i16be, .i32le, .i32be:
            return -(1 << (bits - 1))...(1 << (bits - 1)) - 1
        default:
            return 0...(1 << bits) - 1
        }
    }

    /// Appends `value` (in ``range``) in this conversion's size and byte order.
    func append(_ value: Int64, to bytes: inout [UInt8]) {
        let bits = UInt64(bitPattern: value)
        if isBigEndian {
            var shift = 8 * size
            while shift > 0 {
                shift -= 8
                bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
            }
        } else {
            for index in 0..<size { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(8 * index))) }
        }
    }

    /// The names, for messages: `u8, i8, u16le, ...`.
    static let names = allCases.map(\.rawValue).joined(separator: ", ")
}
