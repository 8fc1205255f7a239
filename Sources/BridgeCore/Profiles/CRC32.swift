/// CRC-32/ISO-HDLC, the CRC-32 of zlib, Ethernet and PNG (reflected polynomial 0xEDB88320, initial
/// value and final XOR 0xFFFFFFFF): `crc32("123456789")` is 0xCBF43926. SwitchBot devices take the
/// CRC-32 of their password in every request (SPEC §15 `{options.password|crc32be}`).
public enum CRC32 {
    /// The CRC of `bytes`.
    public static func checksum(_ bytes: some Sequence<UInt8>) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc = table[Int(UInt8(truncatingIfNeeded: crc) ^ byte)] ^ (crc >> 8)
        }
        return ~crc
    }

    /// The CRC of every byte value, as one step of the reflected division.
    static let table: [UInt32] = (0..<256).map { (index: Int) -> UInt32 in
        var crc = UInt32(index)
        for _ in 0..<8 {
            crc = crc & 1 == 1 ? (crc >> 1) ^ 0xEDB8_8320 : crc >> 1
        }
        return crc
    }
}
