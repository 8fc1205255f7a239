/// A Bluetooth UUID: a 128-bit value, usually written in a short 16- or 32-bit
/// form that stands for an offset on the Bluetooth base UUID
/// `00000000-0000-1000-8000-00805f9b34fb`.
///
/// ```swift
/// BluetoothUUID("180d")!.uuidString  // "0000180d-0000-1000-8000-00805f9b34fb"
/// BluetoothUUID("0x2A37")!.shortForm // "2a37"
/// ```
public struct BluetoothUUID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The most significant 64 bits.
    public let high: UInt64
    /// The least significant 64 bits.
    public let low: UInt64

    /// The lower 64 bits of the Bluetooth base UUID (`8000-00805f9b34fb`).
    static let baseLow: UInt64 = 0x8000_0080_5F9B_34FB
    /// The low 32 bits of the upper half of the Bluetooth base UUID (`0000-1000`).
    static let baseHighLow32: UInt64 = 0x0000_1000

    /// Creates a UUID from its two 64-bit halves.
    public init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }

    /// Creates the UUID of a 16-bit SIG-assigned number, e.g. `0x180D` (Heart Rate service).
    public init(uuid16: UInt16) {
        self.init(uuid32: UInt32(uuid16))
    }

    /// Creates the UUID of a 32-bit SIG-assigned number.
    public init(uuid32: UInt32) {
        self.init(high: UInt64(uuid32) << 32 | Self.baseHighLow32, low: Self.baseLow)
    }

    /// Parses a UUID in any case: 16-bit (`"180d"`, `"0x180D"`), 32-bit
    /// (`"0000180d"`, `"0x0000180D"`), or 128-bit with or without dashes
    /// (`"0000180d-0000-1000-8000-00805f9b34fb"`). Surrounding whitespace is not accepted.
    public init?(_ text: some StringProtocol) {
        var digits: UInt64 = 0
        var high: UInt64 = 0
        var count = 0
        var utf8 = Substring(text).utf8[...]
        var hasPrefix = false
        if utf8.count > 2, utf8.first == 0x30, let second = utf8.dropFirst().first, second | 0x20 == 0x78 {
            utf8 = utf8.dropFirst(2)
            hasPrefix = true
        }
        var position = 0
        for byte in utf8 {
            defer { position += 1 }
            if byte == 0x2D {  // "-"
                // Dashes only at the canonical positions of the 36-character form.
                guard !hasPrefix, position == 8 || position == 13 || position == 18 || position == 23 else { return nil }
                continue
            }
            guard let nibble = Hex.value(of: byte) else { return nil }
            count += 1
            if count > 32 { return nil }
            digits = digits << 4 | UInt64(nibble)
            if count == 16 {
                high = digits
                digits = 0
            }
        }
        let dashes = position - count
        switch count {
        case 4 where dashes == 0:
            self.init(uuid16: UInt16(digits))
        case 8 where dashes == 0:
            self.init(uuid32: UInt32(digits))
        case 32 where !hasPrefix && (dashes == 0 || (dashes == 4 && position == 36)):
            self.init(high: high, low: digits)
        default:
            return nil
        }
    }

    /// The 16-bit SIG number when this UUID is a 16-bit alias on the Bluetooth base UUID.
    public var uuid16: UInt16? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow32, high >> 48 == 0 else { return nil }
        return UInt16(truncatingIfNeeded: high >> 32)
    }

    /// The 32-bit SIG number when this UUID is on the Bluetooth base UUID.
    public var uuid32: UInt32? {
        guard low == Self.baseLow, high & 0xFFFF_FFFF == Self.baseHighLow32 else { return nil }
        return UInt32(truncatingIfNeeded: high >> 32)
    }

    /// The canonical form: 36 lowercase characters, e.g. `"0000180d-0000-1000-8000-00805f9b34fb"`.
    public var uuidString: String {
        String(unsafeUninitializedCapacity: 36) { out in
            var index = 0
            func put(_ value: UInt64, digits: Int) {
                var shift = (digits - 1) * 4
                while shift >= 0 {
                    out[index] = Hex.digit(UInt8(truncatingIfNeeded: value >> UInt64(shift)) & 0x0F)
                    index += 1
                    shift -= 4
                }
            }
            put(high >> 32, digits: 8)
            out[index] = 0x2D; index += 1
            put(high >> 16, digits: 4)
            out[index] = 0x2D; index += 1
            put(high, digits: 4)
            out[index] = 0x2D; index += 1
            put(low >> 48, digits: 4)
            out[index] = 0x2D; index += 1
            put(low, digits: 12)
            return 36
        }
    }

    /// The form used as an MQTT topic segment (SPEC §4): four lowercase hex
    /// digits for a 16-bit UUID on the Bluetooth base UUID (`"180d"`), else
    /// the full 36-character form.
    public var shortForm: String {
        guard let short = uuid16 else { return uuidString }
        return String(unsafeUninitializedCapacity: 4) { out in
            out[0] = Hex.digit(UInt8(short >> 12))
            out[1] = Hex.digit(UInt8((short >> 8) & 0x0F))
            out[2] = Hex.digit(UInt8((short >> 4) & 0x0F))
            out[3] = Hex.digit(UInt8(short & 0x0F))
            return 4
        }
    }

    /// The canonical 36-character form.
    public var description: String { uuidString }

    /// Orders by the 128-bit value.
    public static func < (lhs: BluetoothUUID, rhs: BluetoothUUID) -> Bool {
        (lhs.high, lhs.low) < (rhs.high, rhs.low)
    }
}

extension BluetoothUUID {
    /// The full 128-bit lowercase form of `text` (`0000180d-0000-1000-8000-00805f9b34fb`), or nil
    /// when it is not a UUID.
    public static func normalize(_ text: some StringProtocol) -> String? {
        BluetoothUUID(text)?.uuidString
    }
}
