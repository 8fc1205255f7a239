/// An Apple iBeacon advertisement (SPEC §12): manufacturer data of company `0x004c` whose bytes are type `0x02`,
/// length `0x15` (21), the 16-byte proximity UUID, the major and minor (big-endian) and the measured power at 1 m
/// (a signed byte, dBm).
public struct IBeacon: Sendable, Hashable, CustomStringConvertible {
    /// Apple's company identifier.
    public static let companyID: UInt16 = 0x004C

    /// What identifies a beacon: `ibeacon: "uuid:major:minor"` in `bridge.yaml`.
    public struct Identity: Sendable, Hashable, CustomStringConvertible {
        /// The proximity UUID.
        public var uuid: BluetoothUUID
        /// The major number.
        public var major: UInt16
        /// The minor number.
        public var minor: UInt16

        /// Creates an identity.
        public init(uuid: BluetoothUUID, major: UInt16, minor: UInt16) {
            self.uuid = uuid
            self.major = major
            self.minor = minor
        }

        /// Parses `uuid:major:minor`: a 128-bit UUID (36 characters with dashes, or 32 hex digits) and two decimal
        /// numbers 0...65535. `nil` for anything else.
        public init?(_ text: String) {
            let parts = text.split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 3, let major = Self.number(parts[1]), let minor = Self.number(parts[2]) else { return nil }
            // 36 characters with dashes or 32 hex digits: never a 16- or 32-bit alias.
            guard [32, 36].contains(parts[0].utf8.count), let uuid = BluetoothUUID(parts[0]) else { return nil }
            self.init(uuid: uuid, major: major, minor: minor)
        }

        private static func number(_ text: Substring) -> UInt16? {
            guard !text.isEmpty, text.utf8.count <= 5, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            return UInt16(text)
        }

        /// `uuid:major:minor`, the UUID lowercase with dashes.
        public var description: String { "\(uuid.description.lowercased()):\(major):\(minor)" }
    }

    /// The UUID, major and minor.
    public var identity: Identity
    /// The measured power: the RSSI expected at 1 m (dBm).
    public var measuredPower: Int8

    /// Creates a beacon.
    public init(identity: Identity, measuredPower: Int8) {
        self.identity = identity
        self.measuredPower = measuredPower
    }

    /// Parses the bytes of Apple's manufacturer data (the company id already stripped, as BlueZ's `ManufacturerData`
    /// gives them): `nil` unless they start with type `0x02` and length `0x15` and hold the 21 bytes. Trailing bytes
    /// are ignored (some beacons append one).
    public init?(manufacturerData bytes: [UInt8]) {
        guard bytes.count >= 23, bytes[0] == 0x02, bytes[1] == 0x15 else { return nil }
        let uuid = BluetoothUUID(high: Self.bigEndian(bytes[2..<10]), low: Self.bigEndian(bytes[10..<18]))
        let major = UInt16(bytes[18]) << 8 | UInt16(bytes[19])
        let minor = UInt16(bytes[20]) << 8 | UInt16(bytes[21])
        self.init(identity: Identity(uuid: uuid, major: major, minor: minor), measuredPower: Int8(bitPattern: bytes[22]))
    }

    /// The iBeacon in a device's manufacturer data (by company id), if it holds one.
    public init?(manufacturerData: [UInt16: [UInt8]]) {
        guard let bytes = manufacturerData[Self.companyID] else { return nil }
        self.init(manufacturerData: bytes)
    }

    /// The manufacturer data bytes (without the company id) that advertise this beacon.
    public var manufacturerData: [UInt8] {
        var bytes: [UInt8] = [0x02, 0x15]
        for half in [identity.uuid.high, identity.uuid.low] {
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: half >> UInt64(shift))) }
        }
        bytes += [UInt8(identity.major >> 8), UInt8(identity.major & 0xFF), UInt8(identity.minor >> 8), UInt8(identity.minor & 0xFF)]
        bytes.append(UInt8(bitPattern: measuredPower))
        return bytes
    }

    private static func bigEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// `uuid:major:minor (measured power N dBm)`.
    public var description: String { "\(identity) (measured power \(measuredPower) dBm)" }
}
