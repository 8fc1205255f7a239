/// A small deterministic pseudo-random generator (SplitMix64).
///
/// Every generator and RSSI walk is seeded from the scenario seed and the
/// device address, so a scenario produces the same values on every run.
public struct SimRandom: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator seeded with `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    /// A generator seeded from `seed` mixed with the bytes of `text`.
    public init(seed: UInt64, text: String) {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325 ^ seed
        for b in text.utf8 {
            h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3
        }
        state = h
    }

    /// The next 64 random bits.
    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }
}
