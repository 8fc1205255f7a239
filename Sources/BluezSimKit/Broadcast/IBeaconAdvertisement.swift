import BridgeBase

/// Apple's iBeacon manufacturer data as a beacon sends it, the simulator's own encoder (not the bridge's decoder,
/// which it tests): under company id 0x004C, the type 0x02 and the length 0x15 (21), the proximity UUID (16 bytes
/// as written), major and minor (2 bytes each, big-endian) and the measured power at 1 m (a signed byte, dBm).
struct IBeaconAdvertisement: Sendable, Equatable {
    /// Apple's company identifier, the manufacturer data's key.
    static let companyID: UInt16 = 0x004C

    /// The proximity UUID, 16 bytes as written.
    var uuid: [UInt8]
    var major: UInt16
    var minor: UInt16
    /// The received power at 1 m, dBm.
    var measuredPower: Int8

    /// Parses a scenario's `uuid:major:minor` (a 128-bit UUID, two numbers 0...65535); nil otherwise.
    init?(identity text: String, measuredPower: Int8) {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].utf8.count == 36 || parts[0].utf8.count == 32,
              let uuid = BluetoothUUID(parts[0]),
              let major = UInt16(parts[1]), let minor = UInt16(parts[2])
        else { return nil }
        self.uuid = [uuid.high, uuid.low].flatMap { half in
            stride(from: 56, through: 0, by: -8).map { UInt8(truncatingIfNeeded: half >> UInt64($0)) }
        }
        self.major = major
        self.minor = minor
        self.measuredPower = measuredPower
    }

    /// The manufacturer data (after the company id).
    var manufacturerData: [UInt8] {
        [0x02, 0x15] + uuid + [UInt8(major >> 8), UInt8(major & 0xFF), UInt8(minor >> 8), UInt8(minor & 0xFF)]
            + [UInt8(bitPattern: measuredPower)]
    }
}
