/// A 48-bit Bluetooth device address such as `C8:12:34:56:78:9A`.
public struct BluetoothAddress: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The address as a 48-bit number (the first written byte is the most significant).
    public let value: UInt64

    /// Creates an address from its 48-bit value (upper 16 bits must be zero; they are dropped).
    public init(value: UInt64) {
        self.value = value & 0xFFFF_FFFF_FFFF
    }

    /// Parses `AA:BB:CC:DD:EE:FF` (any case), or the 12 hex digits without
    /// separators (`c8123456789a`, the topic-segment form). BlueZ's `dev_AA_BB_...`
    /// object-path form is accepted as well (`AA_BB_CC_DD_EE_FF`).
    public init?(_ text: some StringProtocol) {
        let utf8 = Substring(text).utf8
        var value: UInt64 = 0
        switch utf8.count {
        case 17:
            var separator: UInt8? = nil
            for (index, byte) in utf8.enumerated() {
                if index % 3 == 2 {
                    guard byte == 0x3A || byte == 0x5F else { return nil }  // ":" or "_"
                    if let expected = separator, expected != byte { return nil }
                    separator = byte
                } else {
                    guard let nibble = Hex.value(of: byte) else { return nil }
                    value = value << 4 | UInt64(nibble)
                }
            }
        case 12:
            for byte in utf8 {
                guard let nibble = Hex.value(of: byte) else { return nil }
                value = value << 4 | UInt64(nibble)
            }
        default:
            return nil
        }
        self.value = value
    }

    /// The six bytes, most significant (first written) first.
    public var bytes: [UInt8] {
        (0..<6).map { UInt8(truncatingIfNeeded: value >> UInt64(40 - 8 * $0)) }
    }

    /// The canonical form, uppercase with colons: `C8:12:34:56:78:9A`.
    public var description: String {
        String(unsafeUninitializedCapacity: 17) { out in
            var index = 0
            for shift in stride(from: 40, through: 0, by: -8) {
                let byte = UInt8(truncatingIfNeeded: value >> UInt64(shift))
                out[index] = Self.upperDigit(byte >> 4)
                out[index + 1] = Self.upperDigit(byte & 0x0F)
                if shift > 0 { out[index + 2] = 0x3A }
                index += 3
            }
            return 17
        }
    }

    /// The topic-segment form (SPEC §4): lowercase hex without separators, `c8123456789a`.
    public var topicSegment: String {
        String(unsafeUninitializedCapacity: 12) { out in
            var index = 0
            for shift in stride(from: 40, through: 0, by: -8) {
                let byte = UInt8(truncatingIfNeeded: value >> UInt64(shift))
                out[index] = Hex.digit(byte >> 4)
                out[index + 1] = Hex.digit(byte & 0x0F)
                index += 2
            }
            return 12
        }
    }

    /// Orders by numeric value.
    public static func < (lhs: BluetoothAddress, rhs: BluetoothAddress) -> Bool {
        lhs.value < rhs.value
    }

    @inline(__always)
    static func upperDigit(_ nibble: UInt8) -> UInt8 {
        nibble < 10 ? nibble &+ 0x30 : nibble &+ 0x37
    }
}
