import Testing

@testable import BridgeCore

/// The owner choice of SPEC §10 driven step by step with explicit times.
@Suite struct ClusterOwnershipTests {
    typealias F = ClusterFixture

    /// A serving `d1` (its owner topic names A; served at the end of the quiet time, 5 s; link up at 6.5 s) with
    /// B hearing it at `bRSSI`.
    func servingA(aRSSI: Int = -60, bRSSI: Int = -70) -> Ownership {
        var a = F.core("a")
        _ = a.join(
            at: 0, online: ["a", "b"], sightings: ["a": F.sightings(["d1": F.heard(aRSSI)]), "b": F.sightings(["d1": F.heard(bRSSI)])],
            owners: ["d1": "a"])
        #expect(a.at(5, .tick) == [.serve(device: "d1", adapter: "hci0")])
        _ = a.at(6.5, .linkUp(device: "d1"))
        _ = a.at(7, .sightings(bridge: "a", F.sightings(slots: 0, ["d1": F.heard(aRSSI, connected: true)])))
        return a
    }

    @Test func claimsAfterTheQuietTimeAndServesAfterTheClaimWait() {
        var a = F.core("a")
        let sightings = ["a": F.sightings(["d1": F.heard(-60)]), "b": F.sightings(["d1": F.heard(-70)])]
        #expect(a.join(at: 0, online: ["a", "b"], sightings: sightings) == [])
        #expect(a.nextDeadline(after: F.t(0.1)) == F.t(5))
        #expect(a.at(4.9, .tick) == [])
        #expect(a.at(5, .tick) == [.publishOwner(device: "d1", bridge: "a", adapter: "hci0"), .publishSightings])
        #expect(a.at(5.05, .owner(device: "d1", F.owner("a"))) == [])  // the echo keeps the wait going
        #expect(a.commandRole(for: "d1") == .execute)
        #expect(a.nextDeadline(after: F.t(5.05)) == F.t(6))
        #expect(a.at(5.99, .tick) == [])
        #expect(!a.isServing("d1"))
        #expect(a.at(6, .tick) == [.serve(device: "d1", adapter: "hci0")])
        #expect(a.isServing("d1"))
        #expect(a.at(6.1, .tick) == [])

        // B, the weaker bridge, never claims.
        var b = F.core("b")
        #expect(b.join(at: 0, online: ["a", "b"], sightings: sightings) == [])
        #expect(b.at(5, .tick) == [])
        #expect(b.at(5.05, .owner(device: "d1", F.owner("a"))) == [])
        #expect(b.at(60, .tick) == [])
        #expect(b.commandRole(for: "d1") == .ignore)
    }

    @Test func tiesGoToTheIDThatSortsFirstAndSlotsCount() {
        let equal = ["a": F.sightings(["d1": F.heard(-60)]), "b": F.sightings(["d1": F.heard(-60)])]
        var a = F.core("a")
        var b = F.core("b")
        _ = a.join(at: 0, online: ["a", "b"], sightings: equal)
        _ = b.join(at: 0, online: ["a", "b"], sightings: equal)
        #expect(a.at(5, .tick).first == .publishOwner(device: "d1", bridge: "a", adapter: "hci0"))
        #expect(b.at(5, .tick) == [])

        // A is stronger but has no free slot: B claims the link device; a listen device needs no slot.
        let full = ["a": F.sightings(slots: 0, ["d1": F.heard(-40), "adv": F.heard(-40)]),
                    "b": F.sightings(["d1": F.heard(-90), "adv": F.heard(-90)])]
        var a2 = F.core("a", wanted: ["d1": .link, "adv": .listen])
        var b2 = F.core("b", wanted: ["d1": .link, "adv": .listen])
        _ = a2.join(at: 0, online: ["a", "b"], sightings: full)
        _ = b2.join(at: 0, online: ["a", "b"], sightings: full)
        #expect(a2.at(5, .tick) == [.publishOwner(device: "adv", bridge: "a", adapter: "hci0"), .publishSightings])
        #expect(b2.at(5, .tick) == [.publishOwner(device: "d1", bridge: "b", adapter: "hci0"), .publishSightings])
    }

    @Test func oneFreeSlotIsClaimedOnce() {
        let view = ["a": F.sightings(slots: 1, ["d1": F.heard(-50), "d2": F.heard(-50)]),
                    "b": F.sightings(slots: 5, ["d1": F.heard(-80), "d2": F.heard(-80)])]
        var a = F.core("a", wanted: ["d1": .link, "d2": .link])
        _ = a.join(at: 0, online: ["a", "b"], sightings: view)
        #expect(a.at(5, .tick) == [.publishOwner(device: "d1", bridge: "a", adapter: "hci0"), .publishSightings])
        var b = F.core("b", wanted: ["d1": .link, "d2": .link])
        _ = b.join(at: 0, online: ["a", "b"], sightings: view)
        _ = b.at(5, .owner(device: "d1", F.owner("a")))
        // B still believes A has a slot for d2 until A's next sightings.
        #expect(b.at(5.1, .tick) == [])
        #expect(b.at(5.2, .sightings(bridge: "a", F.sightings(slots: 0, ["d1": F.heard(-50), "d2": F.heard(-50)])))
            == [.publishOwner(device: "d2", bridge: "b", adapter: "hci0"), .publishSightings])
    }

    /// Both bridges believe they are the best (neither has the other's sightings yet) and claim at once. The
    /// broker orders the two claims; both bridges receive both in that order; exactly one serves.
    @Test(arguments: [true, false]) func twoBridgesClaimAtOnce(aFirst: Bool) {
        var a = F.core("a")
        var b = F.core("b")
        _ = a.join(at: 0, online: ["a", "b"], sightings: ["a": F.sightings(["d1": F.heard(-60)])])
        _ = b.join(at: 0, online: ["a", "b"], sightings: ["b": F.sightings(["d1": F.heard(-60)])])
        #expect(a.at(5, .tick).first == .publishOwner(device: "d1", bridge: "a", adapter: "hci0"))
        #expect(b.at(5.01, .tick).first == .publishOwner(device: "d1", bridge: "b", adapter: "hci0"))
        let order = aFirst ? ["a", "b"] : ["b", "a"]
        var served: [String] = []
        for (index, claimer) in order.enumerated() {
            let time = 5.1 + Double(index) * 0.1
            served += servedDevices(a.at(time, .owner(device: "d1", F.owner(claimer)))).map { _ in "a" }
            served += servedDevices(b.at(time + 0.05, .owner(device: "d1", F.owner(claimer)))).map { _ in "b" }
        }
        for step in stride(from: 5.5, through: 30, by: 0.25) {
            served += servedDevices(a.at(step, .tick)).map { _ in "a" }
            served += servedDevices(b.at(step, .tick)).map { _ in "b" }
        }
        #expect(served == [order[1]])  // the last claim in the broker's order wins, for both
        #expect(a.commandRole(for: "d1") == (order[1] == "a" ? .execute : .ignore))
        #expect(b.commandRole(for: "d1") == (order[1] == "b" ? .execute : .ignore))
    }

    func servedDevices(_ actions: [ClusterAction]) -> [String] {
        actions.compactMap { if case .serve(let device, _) = $0 { device } else { nil } }
    }

    /// Rule 4: values flow again within 10 s of the `offline`: the claim goes out at once, the link starts
    /// after the 1 s claim wait, leaving 9 s for the connection itself.
    @Test func failoverClaimsAtOnceAndServesAfterOneSecond() {
        var b = F.core("b")
        _ = b.join(at: 0, online: ["a", "b"], sightings: ["a": F.sightings(["d1": F.heard(-60)]), "b": F.sightings(["d1": F.heard(-70)])], owners: ["d1": "a"])
        #expect(b.at(50, .tick) == [])
        _ = b.at(95, .sightings(bridge: "b", F.sightings(["d1": F.heard(-70)])))
        #expect(b.at(100, .bridgeState(bridge: "a", online: false)) == [.publishOwner(device: "d1", bridge: "b", adapter: "hci0"), .publishSightings])
        #expect(b.at(100.05, .owner(device: "d1", OwnerPayload(bridge: "b", adapter: "hci0", since: 100))) == [])
        #expect(b.nextDeadline(after: F.t(100.05)) == F.t(101))
        #expect(b.at(101, .tick) == [.serve(device: "d1", adapter: "hci0")])
        #expect(b.commandRole(for: "d1") == .execute)
        // A comes back (rule 4): it finds B the owner and takes nothing back, however well it hears the device.
        var a = F.core("a")
        _ = a.join(at: 200, online: ["a", "b"], sightings: ["a": F.sightings(["d1": F.heard(-30)]), "b": F.sightings(slots: 0, ["d1": F.heard(-70, connected: true)])], owners: ["d1": "b"])
        for step in stride(from: 200.0, through: 230, by: 1) { #expect(a.at(step, .tick) == []) }
        #expect(a.commandRole(for: "d1") == .ignore)
    }

    @Test func rule3HandoverWithHysteresis() {
        var a = servingA(aRSSI: -70, bRSSI: -61)
        var time = 7.0
        func refresh(_ b: Int) -> [ClusterAction] {
            time += 5
            return a.at(time, .sightings(bridge: "a", F.sightings(slots: 0, ["d1": F.heard(-70, connected: true)])))
                + a.at(time, .sightings(bridge: "b", F.sightings(["d1": F.heard(b)])))
        }
        // margin - 1 dB for five minutes: no handover.
        for _ in 0..<60 { #expect(refresh(-61) == []) }
        // The margin for 25 s, broken once, then 25 s again: still no handover.
        for _ in 0..<5 { #expect(refresh(-60) == []) }
        #expect(refresh(-62) == [])
        for _ in 0..<6 { #expect(refresh(-60) == []) }  // 25 s
        // Held for switch_after: the owner stops first and publishes only once the link is down.
        #expect(refresh(-60) == [.stopServing(device: "d1")])
        #expect(a.at(time + 0.1, .tick) == [])
        #expect(a.commandRole(for: "d1") == .execute)
        #expect(a.at(time + 0.5, .linkDown(device: "d1")) == [.publishOwner(device: "d1", bridge: "b", adapter: "hci0")])
        #expect(a.commandRole(for: "d1") == .ignore)
        #expect(a.at(time + 10, .tick) == [])

        // The new owner serves one claim wait after the owner topic names it.
        var b = F.core("b")
        _ = b.join(at: 0, online: ["a", "b"], sightings: [:], owners: ["d1": "a"])
        #expect(b.at(50, .owner(device: "d1", F.owner("b"))) == [])
        #expect(b.at(51, .tick) == [.serve(device: "d1", adapter: "hci0")])
    }

    @Test func releaseAfterSixtySecondsNotHeard() {
        var a = servingA()
        _ = a.at(10, .linkDown(device: "d1"))
        _ = a.at(10, .sightings(bridge: "a", F.sightings(["other": F.heard(-50)])))
        _ = a.at(10, .sightings(bridge: "b", F.sightings(["other": F.heard(-50)])))
        #expect(a.nextDeadline(after: F.t(10)) == F.t(25))  // B's sightings go stale first
        #expect(a.at(69.9, .tick) == [])
        #expect(a.nextDeadline(after: F.t(69.9)) == F.t(70))
        // Nobody else hears it: the topic is emptied.
        #expect(a.at(70, .tick) == [.stopServing(device: "d1"), .clearOwner(device: "d1")])
        #expect(a.owners["d1"] == nil)
        #expect(a.at(71, .tick) == [])  // A no longer hears it either: no new claim

        // Heard by B (just now, weaker than the margin would need for a handover): handed to B.
        var a2 = servingA()
        _ = a2.at(10, .linkDown(device: "d1"))
        _ = a2.at(10, .sightings(bridge: "a", F.sightings([:])))
        #expect(a2.at(65, .sightings(bridge: "b", F.sightings(["d1": F.heard(-95)]))) == [])
        #expect(a2.at(70, .tick) == [.stopServing(device: "d1"), .publishOwner(device: "d1", bridge: "b", adapter: "hci0")])
    }

    /// The owner stopped its link for a handover and crashed before publishing: its last will makes the device
    /// ownerless and B claims it. Had it crashed after publishing, B simply serves.
    @Test func ownerCrashesDuringAHandover() {
        var b = F.core("b")
        _ = b.join(at: 0, online: ["a", "b"], sightings: ["a": F.sightings(["d1": F.heard(-80)]), "b": F.sightings(["d1": F.heard(-50)])], owners: ["d1": "a"])
        #expect(b.at(40, .sightings(bridge: "b", F.sightings(["d1": F.heard(-50)]))) == [])
        #expect(b.at(45, .bridgeState(bridge: "a", online: false)).first == .publishOwner(device: "d1", bridge: "b", adapter: "hci0"))
        _ = b.at(45.05, .owner(device: "d1", F.owner("b")))
        #expect(b.at(46, .tick) == [.serve(device: "d1", adapter: "hci0")])

        // Handed over to B, and B crashed before serving: A, still online, claims the device back by rule 2.
        var a = servingA(aRSSI: -80, bRSSI: -50)
        var time = 7.0
        var actions: [ClusterAction] = []
        while !actions.contains(.stopServing(device: "d1")) {
            time += 5
            actions = a.at(time, .sightings(bridge: "a", F.sightings(slots: 0, ["d1": F.heard(-80, connected: true)])))
                + a.at(time, .sightings(bridge: "b", F.sightings(["d1": F.heard(-50)])))
        }
        #expect(time == 37)
        #expect(a.at(38, .linkDown(device: "d1")) == [.publishOwner(device: "d1", bridge: "b", adapter: "hci0")])
        _ = a.at(38.5, .sightings(bridge: "a", F.sightings(["d1": F.heard(-80)])))
        #expect(a.at(39, .bridgeState(bridge: "b", online: false)) == [.publishOwner(device: "d1", bridge: "a", adapter: "hci0"), .publishSightings])
        #expect(a.at(40, .tick) == [.serve(device: "d1", adapter: "hci0")])
    }

    /// The handover target goes offline while the owner waits for its link to drop: the owner keeps the device.
    @Test func handoverTargetGoesOfflineBeforeThePublish() {
        var a = servingA(aRSSI: -80, bRSSI: -50)
        for step in 1...6 {
            _ = a.at(7 + Double(step) * 5, .sightings(bridge: "a", F.sightings(slots: 0, ["d1": F.heard(-80, connected: true)])))
            _ = a.at(7 + Double(step) * 5, .sightings(bridge: "b", F.sightings(["d1": F.heard(-50)])))
        }
        #expect(a.phases["d1"] == .releasing(to: .init(bridge: "b", adapter: "hci0", rssi: -50)))
        #expect(a.at(38, .bridgeState(bridge: "b", online: false)) == [])
        #expect(a.at(39, .linkDown(device: "d1")) == [.serve(device: "d1", adapter: "hci0")])
    }

    @Test func staleRetainedClaimOfItsOwn() {
        let view = ["a": F.sightings(["d1": F.heard(-60)]), "b": F.sightings(["d1": F.heard(-70)])]
        // Nobody claimed the device while A was away: A serves it again, but not in its quiet time.
        var a = F.core("a")
        #expect(a.join(at: 0, online: ["a", "b"], sightings: view, owners: ["d1": "a"]) == [])
        #expect(a.at(4.9, .tick) == [])
        #expect(a.at(5, .tick) == [.serve(device: "d1", adapter: "hci0")])

        // A claim of B, published before B saw A's `online`, arrives after the replay: B's claim wins.
        var a2 = F.core("a")
        _ = a2.join(at: 0, online: ["a", "b"], sightings: view, owners: ["d1": "a"])
        #expect(a2.at(0.5, .owner(device: "d1", F.owner("b"))) == [])
        for step in stride(from: 1.0, through: 60, by: 1) { #expect(a2.at(step, .tick) == []) }
        #expect(a2.commandRole(for: "d1") == .ignore)
    }

    /// A broker restart replays every retained topic: no handover, and never two links.
    @Test func brokerRestartReplaysRetainedTopics() {
        var b = F.core("b")
        let view = ["a": F.sightings(slots: 0, ["d1": F.heard(-60, connected: true)]), "b": F.sightings(["d1": F.heard(-70)])]
        _ = b.join(at: 0, online: ["a", "b"], sightings: view, owners: ["d1": "a"])
        // A resubscription replays the same retained messages: nothing changes.
        var replayA = servingA()
        #expect(replayA.at(20, .owner(device: "d1", F.owner("a"))) == [])
        #expect(replayA.at(20, .bridgeState(bridge: "a", online: true)) == [])
        #expect(replayA.at(20, .sightings(bridge: "b", view["b"]!)) == [])
        #expect(replayA.isServing("d1"))
        #expect(b.at(20, .owner(device: "d1", F.owner("a"))) == [])

        // A full restart: the links stop with the broker, and come back on the same bridge.
        var c = servingA()
        #expect(c.at(30, .brokerDisconnected) == [.stopServing(device: "d1")])
        #expect(c.at(30.2, .linkDown(device: "d1")) == [])
        #expect(b.at(30, .brokerDisconnected) == [])
        #expect(c.join(at: 40, online: ["a", "b"], sightings: view, owners: ["d1": "a"]) == [])
        #expect(b.join(at: 40, online: ["a", "b"], sightings: view, owners: ["d1": "a"]) == [])
        #expect(c.at(44.9, .tick) == [])
        #expect(c.at(45, .tick) == [.serve(device: "d1", adapter: "hci0")])
        for step in stride(from: 40.0, through: 100, by: 1) {
            _ = b.at(step, .sightings(bridge: "a", view["a"]!))
            #expect(b.at(step, .tick) == [])
        }
    }

    @Test func commandRoles() {
        var b = F.core("b")
        _ = b.join(at: 0, online: ["b", "c"], sightings: [:])
        _ = b.at(0, .bridgeState(bridge: "a", online: false))
        // No owner: the online bridge whose id sorts first ("a" is offline) answers not_connected.
        #expect(b.commandRole(for: "d1") == .answerNotConnected)
        var c = F.core("c")
        _ = c.join(at: 0, online: ["b", "c"], sightings: [:])
        #expect(c.commandRole(for: "d1") == .ignore)
        // An owner topic naming an offline bridge counts as no owner.
        _ = c.at(1, .owner(device: "d1", F.owner("a")))
        #expect(c.commandRole(for: "d1") == .ignore)
        _ = b.at(1, .owner(device: "d1", F.owner("a")))
        #expect(b.commandRole(for: "d1") == .answerNotConnected)
        _ = c.at(2, .owner(device: "d1", F.owner("c")))
        #expect(c.commandRole(for: "d1") == .execute)
        // A known peripheral owned by another online bridge is not connected (rule 6).
        _ = b.at(2, .owner(device: "d1", F.owner("c")))
        #expect(b.commandRole(for: "d1") == .ignore)
        #expect(!b.isServing("d1"))
    }

    @Test func aLinkNotServedIsDropped() {
        var b = F.core("b")
        _ = b.join(at: 0, online: ["a", "b"], sightings: [:], owners: ["d1": "a"])
        #expect(b.at(1, .linkUp(device: "d1")) == [.stopServing(device: "d1")])
        // And a served device claimed by another bridge (the broker's order) stops at once.
        var a = servingA()
        #expect(a.at(10, .owner(device: "d1", F.owner("b"))) == [.stopServing(device: "d1")])
        #expect(!a.isServing("d1"))
    }
}
