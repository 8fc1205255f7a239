import BridgeBase

/// An identity resolving key (IRK) of a simulated phone, and the resolvable private addresses it advertises from,
/// the simulator's own generator, written from the Bluetooth Core specification and not from the bridge's resolver,
/// which it tests:
///
/// - Vol 6 Part B §1.3.2.2: a resolvable private address is `prand` (24 bits, the most significant octets of the
///   address, its two most significant bits `0b01`, at least one of its 22 random bits 0 and one 1) followed by
///   `hash = ah(IRK, prand)` (24 bits);
/// - Vol 3 Part H §2.2.2: `ah(k, r) = e(k, r') mod 2^24`, with `r'` = 104 bits of zero padding followed by `r`,
///   and `e` AES-128 of one block (§2.2.1), key and block most significant octet first.
public struct PrivacyKey: Sendable, Hashable {
    /// The key's 16 bytes, most significant first (as a scenario writes them).
    public let bytes: [UInt8]

    /// A key from 32 hex digits, most significant byte first (a scenario's `irk`); nil otherwise.
    public init?(hex: String) {
        guard let key = try? Hex.decode(hex), key.count == 16, hex.utf8.count == 32 else { return nil }
        bytes = key
    }

    /// The random address hash function `ah` of the Core specification: the 24-bit hash of the 24-bit `prand`
    /// (its upper 8 bits ignored). Nil only when libcrypto fails.
    public func ah(_ prand: UInt32) -> UInt32? {
        let r = [UInt8](repeating: 0, count: 13) + [16, 8, 0].map { UInt8(truncatingIfNeeded: prand >> $0) }
        guard let e = SimAES.encryptBlock(key: bytes, r) else { return nil }
        return UInt32(e[13]) << 16 | UInt32(e[14]) << 8 | UInt32(e[15])
    }

    /// The `prand` made of 22 random bits: the two most significant bits set to `0b01` (a resolvable private
    /// address), and the random bits, should they be all 0 or all 1, with their lowest bit flipped (the
    /// specification wants at least one of each).
    public static func prand(random: UInt32) -> UInt32 {
        let randomBits: UInt32 = 0x3F_FFFF
        var part = random & randomBits
        if part == 0 || part == randomBits { part ^= 1 }
        return 0x40_0000 | part
    }

    /// The resolvable private address of this key for `prand` (its top bits as ``prand(random:)`` sets them):
    /// `prand` in the three most significant octets, `ah(prand)` in the three least. Nil only when libcrypto fails.
    public func resolvablePrivateAddress(prand: UInt32) -> BluetoothAddress? {
        guard let hash = ah(prand) else { return nil }
        return BluetoothAddress(value: UInt64(prand & 0xFF_FFFF) << 24 | UInt64(hash))
    }

    /// Whether `address` is a resolvable private address of this key: its top two bits `0b01` and its hash
    /// `ah(prand)`.
    public func resolves(_ address: BluetoothAddress) -> Bool {
        let prand = UInt32(truncatingIfNeeded: address.value >> 24)
        guard prand >> 22 == 0b01, let hash = ah(prand) else { return false }
        return hash == UInt32(truncatingIfNeeded: address.value & 0xFF_FFFF)
    }
}
