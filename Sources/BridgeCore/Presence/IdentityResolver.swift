/// Resolves random addresses to the configured IRKs (SPEC §12), with a bounded cache of the answers so that a phone
/// costs one AES block per IRK when it takes a new address, not one per advertisement.
///
/// Only random addresses whose two top bits are `01` (resolvable private addresses) are candidates: a public address,
/// a static random one (`11`) or a non-resolvable one (`00`) is never tried and never cached. A candidate is tried
/// against every key once; the answer (the index of the first key that resolves it, or "none") is cached. The
/// cache holds at most ``capacity`` addresses and forgets the oldest entry first: with 200 advertisers around,
/// rotating every 15 minutes, 4096 entries hold hours of addresses, and a forgotten one is only resolved again.
public struct IdentityResolver: Sendable {
    /// The keys, in configuration order.
    public let keys: [IdentityResolvingKey]
    /// The most addresses cached.
    public let capacity: Int
    /// Cached answers: address → index into ``keys``, or `nil` for an address no key resolves.
    public private(set) var cache: [BluetoothAddress: Int?] = [:]
    /// Insertion order of the cached addresses, a ring: `order[next]` is the oldest once the ring is full.
    private var order: [BluetoothAddress] = []
    private var next = 0
    /// How many AES blocks were computed (for tests and benchmarks).
    public private(set) var aesBlocks = 0

    /// Creates a resolver for `keys`.
    public init(keys: [IdentityResolvingKey], capacity: Int = 4096) {
        precondition(capacity > 0, "capacity must be positive")
        self.keys = keys
        self.capacity = capacity
        order.reserveCapacity(min(capacity, 1024))
    }

    /// The index into ``keys`` of the key that resolves `address`, or `nil` when none does (or the address is not a
    /// random resolvable one: `isRandom` is BlueZ's `AddressType == "random"`).
    public mutating func resolve(_ address: BluetoothAddress, isRandom: Bool) -> Int? {
        guard isRandom, !keys.isEmpty, IdentityResolvingKey.isResolvable(address) else { return nil }
        if let cached = cache[address] { return cached }
        var found: Int?
        for (index, key) in keys.enumerated() {
            aesBlocks += 1
            if key.resolves(address) {
                found = index
                break
            }
        }
        remember(address, found)
        return found
    }

    private mutating func remember(_ address: BluetoothAddress, _ answer: Int?) {
        if order.count < capacity {
            order.append(address)
        } else {
            cache[order[next]] = nil
            order[next] = address
            next = (next + 1) % capacity
        }
        cache[address] = .some(answer)
    }
}
