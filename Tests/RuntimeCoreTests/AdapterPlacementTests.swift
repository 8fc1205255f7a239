import BridgeCore
import Testing

@testable import RuntimeCore

/// The decisions of several adapters in one bridge (SPEC §10), step by step over a fake clock.
@Suite struct AdapterPlacementTests {
    let x = "C8:12:34:56:78:9A"
    let y = "C8:12:34:56:78:9B"
    func t(_ seconds: Int) -> BridgeInstant { BridgeInstant(offset: .seconds(seconds)) }

    func placement(_ adapters: String...) -> AdapterPlacement {
        var p = AdapterPlacement(rule: SwitchRule(margin: 10, after: .seconds(30)))
        for a in adapters { p.adapterUp(a) }
        return p
    }

    @Test func heardByBothConnectsThroughTheStronger() {
        var p = placement("hci0", "hci1")
        p.heard(x, on: "hci0", rssi: -80, now: t(0))
        p.heard(x, on: "hci1", rssi: -60, now: t(0))
        #expect(p.decide(x, freeSlots: ["hci0": 7, "hci1": 7], now: t(0)) == .connect(through: "hci1"))
        // Not heard at all: wait; 127 (no valid RSSI) is no reading.
        p.heard(y, on: "hci0", rssi: 127, now: t(0))
        #expect(p.decide(y, freeSlots: ["hci0": 7, "hci1": 7], now: t(0)) == .wait)
    }

    @Test func theStrongerAdapterFullGoesToTheOther() {
        var p = placement("hci0", "hci1")
        p.heard(x, on: "hci0", rssi: -80, now: t(0))
        p.heard(x, on: "hci1", rssi: -60, now: t(0))
        #expect(p.decide(x, freeSlots: ["hci0": 1, "hci1": 0], now: t(0)) == .connect(through: "hci0"))
        // Full everywhere: wait.
        #expect(p.decide(y, freeSlots: ["hci0": 0, "hci1": 0], now: t(0)) == .wait)
        p.heard(y, on: "hci1", rssi: -50, now: t(0))
        #expect(p.decide(y, freeSlots: ["hci0": 3], now: t(0)) == .wait, "hci1 is up but has no free slot")
    }

    @Test func oldReadingsAndAdaptersDownDoNotCount() {
        var p = placement("hci0", "hci1")
        p.heard(x, on: "hci0", rssi: -80, now: t(0))
        p.heard(x, on: "hci1", rssi: -60, now: t(0))
        p.heard(x, on: "hci0", rssi: -80, now: t(50))
        // hci1's reading is 60 s old at t(60): only hci0 hears it.
        #expect(p.currentReadings(x, now: t(60)) == ["hci0": -80])
        #expect(p.decide(x, freeSlots: ["hci0": 1, "hci1": 1], now: t(60)) == .connect(through: "hci0"))
        // A reading from an adapter that is not up does not count either.
        p.heard(x, on: "hci2", rssi: -30, now: t(61))
        #expect(p.currentReadings(x, now: t(61)) == ["hci0": -80])
    }

    @Test func anAdapterPoweredOffMovesItsDevicesToTheOthers() {
        var p = placement("hci0", "hci1")
        let slots = ["hci0": 7, "hci1": 7]
        p.heard(x, on: "hci0", rssi: -80, now: t(0))
        p.heard(x, on: "hci1", rssi: -60, now: t(0))
        #expect(p.decide(x, freeSlots: slots, now: t(0)) == .connect(through: "hci1"))
        p.link(x, on: "hci1")
        #expect(p.decide(x, freeSlots: slots, now: t(1)) == .stay(on: "hci1"))
        #expect(p.adapterDown("hci1") == [x])
        #expect(p.links[x] == nil)
        // At once, without waiting for switch_after: the old place is gone.
        #expect(p.decide(x, freeSlots: slots, now: t(2)) == .connect(through: "hci0"))
        p.link(x, on: "hci0")
        // hci1 back and stronger: no move while the link works until the rule holds.
        p.adapterUp("hci1")
        for second in 3..<33 {
            p.heard(x, on: "hci1", rssi: -60, now: t(second))
            p.heard(x, on: "hci0", rssi: -80, now: t(second))
            #expect(p.decide(x, freeSlots: slots, now: t(second)) == .stay(on: "hci0"), "t=\(second)")
        }
        #expect(p.nextDeadline == t(33))
        p.heard(x, on: "hci1", rssi: -60, now: t(33))
        #expect(p.decide(x, freeSlots: slots, now: t(33)) == .move(from: "hci0", to: "hci1"))
        // The move holds until the old link is down, then the device connects through the new adapter.
        #expect(p.decide(x, freeSlots: slots, now: t(34)) == .move(from: "hci0", to: "hci1"))
        p.link(x, on: nil)
        #expect(p.decide(x, freeSlots: slots, now: t(35)) == .connect(through: "hci1"))
    }

    @Test func noMoveBelowTheMarginOrWithoutAFreeSlot() {
        var p = placement("hci0", "hci1")
        p.heard(x, on: "hci0", rssi: -70, now: t(0))
        #expect(p.decide(x, freeSlots: ["hci0": 1, "hci1": 1], now: t(0)) == .connect(through: "hci0"))
        p.link(x, on: "hci0")
        for second in 1...100 {
            p.heard(x, on: "hci0", rssi: -70, now: t(second))
            // 9 dB stronger: never enough.
            p.heard(x, on: "hci1", rssi: -61, now: t(second))
            #expect(p.decide(x, freeSlots: ["hci0": 0, "hci1": 1], now: t(second)) == .stay(on: "hci0"))
        }
        for second in 101...200 {
            p.heard(x, on: "hci0", rssi: -70, now: t(second))
            // 20 dB stronger, but no free slot there.
            p.heard(x, on: "hci1", rssi: -50, now: t(second))
            #expect(p.decide(x, freeSlots: ["hci0": 0, "hci1": 0], now: t(second)) == .stay(on: "hci0"))
        }
    }

    @Test func removingADeviceForgetsIt() {
        var p = placement("hci0")
        p.heard(x, on: "hci0", rssi: -70, now: t(0))
        p.link(x, on: "hci0")
        p.remove(x)
        #expect(p.links[x] == nil)
        #expect(p.currentReadings(x, now: t(0)).isEmpty)
        #expect(p.decide(x, freeSlots: ["hci0": 1], now: t(0)) == .wait)
    }
}
