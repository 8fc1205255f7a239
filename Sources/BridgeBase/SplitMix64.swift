/// A small, fast, seedable random number generator (SplitMix64): backoff jitter that is
/// deterministic under test, the simulator's values (the same on every run of a scenario), and
/// the tests' reproducible fuzz inputs.
public struct SplitMix64: RandomNumberGenerator, Sendable, Hashable {
    var state: UInt64

    /// Creates a generator; equal seeds give equal sequences.
    public init(seed: UInt64) {
        self.state = seed
    }

    /// A generator seeded from `seed` mixed with the UTF-8 bytes of `text` (FNV-1a), so that
    /// things named differently (a device address, a characteristic) get different sequences
    /// from one seed.
    public init(seed: UInt64, text: String) {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for b in text.utf8 {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3
        }
        state = h
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniformly distributed double in `0..<1`.
    public mutating func nextUnit() -> Double {
        Double(next() >> 11) * 0x1.0p-53
    }
}
