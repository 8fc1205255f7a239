import Testing

@testable import BridgeCore

@Suite struct ClusterAdapterChoiceTests {
    typealias Choice = AdapterChoice<FakeInstant>
    let rule = SwitchRule(margin: 10, after: .seconds(30))
    func t(_ seconds: Double) -> FakeInstant { .seconds(seconds) }

    @Test func startsOnTheStrongestAdapterWithAFreeSlot() {
        var choice = Choice(rule: rule)
        #expect(choice.choose(readings: ["hci0": -80, "hci1": -60], freeSlots: ["hci0": 1, "hci1": 0], connectedOn: nil, now: t(0)) == "hci0")
        var other = Choice(rule: rule)
        #expect(other.choose(readings: ["hci0": -80, "hci1": -60], freeSlots: ["hci0": 1, "hci1": 1], connectedOn: nil, now: t(0)) == "hci1")
        // Ties: the name that sorts first.
        var tie = Choice(rule: rule)
        #expect(tie.choose(readings: ["hci1": -70, "hci0": -70], freeSlots: ["hci0": 1, "hci1": 1], connectedOn: nil, now: t(0)) == "hci0")
        // No slot anywhere, or not heard: nothing.
        var none = Choice(rule: rule)
        #expect(none.choose(readings: ["hci0": -70], freeSlots: ["hci0": 0, "hci1": 3], connectedOn: nil, now: t(0)) == nil)
    }

    @Test func noFlappingBelowTheMarginOrShorterThanSwitchAfter() {
        var choice = Choice(rule: rule)
        let slots = ["hci0": 2, "hci1": 2]
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -75], freeSlots: slots, connectedOn: nil, now: t(0)) == "hci0")
        // hci1 stronger by margin - 1 dB for a long time: stays.
        for second in stride(from: 5.0, through: 300, by: 5) {
            #expect(choice.choose(readings: ["hci0": -70, "hci1": -61], freeSlots: slots, connectedOn: nil, now: t(second)) == "hci0")
        }
        // Stronger by the margin, but broken once before switch_after: the wait starts over.
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -60], freeSlots: slots, connectedOn: nil, now: t(400)) == "hci0")
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -60], freeSlots: slots, connectedOn: nil, now: t(425)) == "hci0")
        #expect(choice.nextDeadline == t(430))
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -65], freeSlots: slots, connectedOn: nil, now: t(429)) == "hci0")
        #expect(choice.nextDeadline == nil)
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -60], freeSlots: slots, connectedOn: nil, now: t(430)) == "hci0")
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -60], freeSlots: slots, connectedOn: nil, now: t(459)) == "hci0")
        // Held for switch_after: moves.
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -60], freeSlots: slots, connectedOn: nil, now: t(460)) == "hci1")
        // And does not come back at once when hci0 recovers by less than the margin.
        #expect(choice.choose(readings: ["hci0": -55, "hci1": -60], freeSlots: slots, connectedOn: nil, now: t(461)) == "hci1")
    }

    @Test func aWorkingLinkMovesOnlyWhenTheRuleHolds() {
        var choice = Choice(rule: rule)
        let slots = ["hci0": 1, "hci1": 1]
        #expect(choice.choose(readings: ["hci0": -70], freeSlots: slots, connectedOn: nil, now: t(0)) == "hci0")
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -50], freeSlots: slots, connectedOn: "hci0", now: t(1)) == "hci0")
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -50], freeSlots: slots, connectedOn: "hci0", now: t(30)) == "hci0")
        // The rule holds: move (the runtime disconnects, then connects through hci1), and the decision stays
        // while the old link is still going down.
        #expect(choice.choose(readings: ["hci0": -70, "hci1": -50], freeSlots: slots, connectedOn: "hci0", now: t(31)) == "hci1")
        #expect(choice.choose(readings: ["hci0": -40, "hci1": -50], freeSlots: slots, connectedOn: "hci0", now: t(32)) == "hci1")
        #expect(choice.choose(readings: ["hci0": -40, "hci1": -50], freeSlots: slots, connectedOn: nil, now: t(33)) == "hci1")
        #expect(choice.pendingMove == nil)
    }

    @Test func aLinkOfUnknownStrengthIsKept() {
        var choice = Choice(rule: rule)
        let slots = ["hci0": 1, "hci1": 1]
        for second in stride(from: 0.0, through: 120, by: 5) {
            #expect(choice.choose(readings: ["hci1": -30], freeSlots: slots, connectedOn: "hci0", now: t(second)) == "hci0")
        }
    }

    @Test func anAdapterThatGoesAwayMovesItsDevicesAtOnce() {
        var choice = Choice(rule: rule)
        #expect(choice.choose(readings: ["hci0": -60, "hci1": -80], freeSlots: ["hci0": 1, "hci1": 1], connectedOn: "hci0", now: t(0)) == "hci0")
        // hci0 unplugged: gone from the slots, its readings gone; no hysteresis for a dead adapter.
        #expect(choice.choose(readings: ["hci1": -80], freeSlots: ["hci1": 1], connectedOn: "hci0", now: t(1)) == "hci1")
        // hci0 back and much stronger: the rule applies again.
        #expect(choice.choose(readings: ["hci0": -40, "hci1": -80], freeSlots: ["hci0": 1, "hci1": 1], connectedOn: nil, now: t(2)) == "hci1")
        #expect(choice.choose(readings: ["hci0": -40, "hci1": -80], freeSlots: ["hci0": 1, "hci1": 1], connectedOn: nil, now: t(32)) == "hci0")
    }

    @Test func aFullAdapterIsNoChallenger() {
        var choice = Choice(rule: rule)
        #expect(choice.choose(readings: ["hci0": -80], freeSlots: ["hci0": 1, "hci1": 0], connectedOn: nil, now: t(0)) == "hci0")
        for second in stride(from: 0.0, through: 100, by: 10) {
            #expect(choice.choose(readings: ["hci0": -80, "hci1": -40], freeSlots: ["hci0": 1, "hci1": 0], connectedOn: nil, now: t(second)) == "hci0")
        }
    }

    @Test func switchTimerRestartsOnABreak() {
        var timer = SwitchTimer<String, FakeInstant>()
        #expect(timer.observe(qualifying: ["b"], now: t(0), after: .seconds(10)) == [])
        #expect(timer.observe(qualifying: ["b", "c"], now: t(9), after: .seconds(10)) == [])
        #expect(timer.observe(qualifying: ["b", "c"], now: t(10), after: .seconds(10)) == ["b"])
        #expect(timer.observe(qualifying: ["c"], now: t(11), after: .seconds(10)) == [])
        #expect(timer.observe(qualifying: ["b", "c"], now: t(19), after: .seconds(10)) == ["c"])
        #expect(timer.nextDeadline(after: .seconds(10)) == t(19))
        #expect(SwitchRule(margin: 10).isStronger(-60, than: .heard(-70)))
        #expect(!SwitchRule(margin: 10).isStronger(-61, than: .heard(-70)))
        #expect(!SwitchRule(margin: 10).isStronger(0, than: .heardUnknownStrength))
        #expect(SwitchRule(margin: 10).isStronger(-100, than: .notHeard))
    }
}
