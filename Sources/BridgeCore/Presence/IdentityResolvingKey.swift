/// An Identity Resolving Key (IRK): the 128-bit key with which a device that uses resolvable private addresses
/// (phones, watches) lets its bonded peers recognise it, and which `trackers[].match.irk` gives (SPEC §12).
///
/// ## Byte order
/// The configuration writes the IRK as 32 hex digits, **most significant byte first**: the order of the Core
/// specification's sample data (Vol 3 Part H, Appendix D.7: `ec0234a357c8ad05341010a60a397d9b`). The security
/// function e (Vol 3 Part H 2.2.1) takes "the most significant octet of key" as `key[0]` in FIPS-197's notation, so
/// those bytes, in the order written, are the AES-128 key as FIPS-197 (and ``AES128``) takes it: no reversal. (Tools that dump the
/// key from an HCI trace or Android's `bt_config.conf` show it least significant byte first: such a key must be
/// reversed before it is configured; the README's Presence section says how to tell.)
///
/// ## `ah` and a resolvable private address
/// A resolvable private address (RPA) is 48 bits: `prand` (24 bits, its two most significant bits `01`) in the
/// most significant half and `hash = ah(IRK, prand)` (24 bits) in the least significant half (Vol 6 Part B 1.3.2.2).
/// BlueZ writes an address most significant byte first, so in `"70:81:94:0D:FB:AA"` (the sample data's address) the
/// first three bytes (`70:81:94`, top bits `01`) are `prand` and the last three (`0D:FB:AA`) the `hash`, each most
/// significant byte first too:
/// ``BluetoothAddress/value`` `>> 24` is `prand` and `& 0xFFFFFF` the hash.
///
/// `ah(k, r) = e(k, r') mod 2^24` with `r' = padding || r`: the plaintext block is 13 zero bytes followed by the three
/// bytes of `prand`, most significant first, and the hash is the last three bytes of the ciphertext, most
/// significant first (Vol 3 Part H 2.2.2).
public struct IdentityResolvingKey: Sendable, Hashable, CustomStringConvertible {
    /// The 16 key bytes, most significant first (the order written in `bridge.yaml`).
    public let bytes: [UInt8]
    /// The key's AES-128 schedule, computed once.
    let cipher: AES128

    /// A key from its 16 bytes, most significant first; nil unless there are 16.
    public init?(bytes: [UInt8]) {
        guard let cipher = AES128(key: bytes) else { return nil }
        self.bytes = bytes
        self.cipher = cipher
    }

    /// Keys are equal when their bytes are (the schedule follows from them).
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.bytes == rhs.bytes }

    /// Hashes the bytes.
    public func hash(into hasher: inout Hasher) { hasher.combine(bytes) }

    /// A key from 32 hex digits, most significant byte first (any case); nil for anything else.
    public init?(hex: String) {
        guard hex.utf8.count == 32, let bytes = try? Hex.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// Never the key itself (it is a secret): only that it is one.
    public var description: String { "IdentityResolvingKey(…)" }

    /// The random part's marker: the two most significant bits of a resolvable private address are `01`.
    public static func isResolvable(_ address: BluetoothAddress) -> Bool {
        address.value >> 46 == 0b01
    }

    /// `ah(IRK, prand)` (Vol 3 Part H 2.2.2): the 24-bit hash of the 24-bit `prand` (its low 24 bits are used).
    public func ah(_ prand: UInt32) -> UInt32 {
        var block = SIMD16<UInt8>()
        block[13] = UInt8(truncatingIfNeeded: prand >> 16)
        block[14] = UInt8(truncatingIfNeeded: prand >> 8)
        block[15] = UInt8(truncatingIfNeeded: prand)
        let out = cipher.encrypt(block)
        return UInt32(out[13]) << 16 | UInt32(out[14]) << 8 | UInt32(out[15])
    }

    /// Whether `address` is a resolvable private address of this key: its top bits are `01` and
    /// `ah(IRK, prand) == hash`. One AES block per call: ``IdentityResolver`` caches the answers.
    public func resolves(_ address: BluetoothAddress) -> Bool {
        guard Self.isResolvable(address) else { return false }
        let prand = UInt32(truncatingIfNeeded: address.value >> 24) & 0xFF_FFFF
        let hash = UInt32(truncatingIfNeeded: address.value) & 0xFF_FFFF
        return ah(prand) == hash
    }

    /// A resolvable private address of this key from 22 random bits (`random`'s low 22 bits; the top bits are set to
    /// `01`): what a phone does every 15 minutes. Never `nil` (it was
    /// when `ah` went through libcrypto, which could fail; the optional stays for its callers). The two `prand`
    /// values the Core specification forbids (all random bits 0 or all 1) are replaced by their neighbour.
    public func resolvablePrivateAddress(random: UInt32) -> BluetoothAddress? {
        var bits = random & 0x3F_FFFF
        if bits == 0 { bits = 1 }
        if bits == 0x3F_FFFF { bits = 0x3F_FFFE }
        let prand = 0x40_0000 | bits
        return BluetoothAddress(value: UInt64(prand) << 24 | UInt64(ah(prand)))
    }
}
