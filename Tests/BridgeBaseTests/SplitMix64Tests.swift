import BridgeBase
import Testing

/// ``SplitMix64``: the one generator of the bridge, the simulator and the tests.
@Suite struct SplitMix64Tests {
    @Test("the reference sequence of SplitMix64 (seed 0), so backoff jitter and fuzz inputs stay reproducible")
    func referenceSequence() {
        var random = SplitMix64(seed: 0)
        #expect(random.next() == 0xE220_A839_7B1D_CDAF)
    }

    @Test("seed and text: the sequence the simulator's scenarios have always produced; other text, another sequence")
    func seededFromText() {
        var a = SplitMix64(seed: 42, text: "AA:BB:CC:DD:EE:FF")
        #expect(a.next() == 0xB15D_37CF_C6B4_F3C8)
        #expect(a.next() == 0x44CB_AC5D_0E38_BD8B)
        var b = SplitMix64(seed: 42, text: "AA:BB:CC:DD:EE:FE")
        var c = SplitMix64(seed: 43, text: "AA:BB:CC:DD:EE:FF")
        #expect(b.next() != 0xB15D_37CF_C6B4_F3C8)
        #expect(c.next() != 0xB15D_37CF_C6B4_F3C8)
    }
}
