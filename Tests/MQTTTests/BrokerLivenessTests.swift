import Testing

@testable import MQTT

/// The probe schedule and the cut-off moment (SPEC §10 rule 7), on plain millisecond numbers.
@Suite("BrokerLiveness")
struct BrokerLivenessTests {
    @Test("a probe at once, then every quarter keep-alive while each is answered; never cut off while they are")
    func healthy() {
        var liveness = BrokerLiveness(keepAliveMs: 10_000, connectedAtMs: 1_000)
        #expect(liveness.probeDue(atMs: 1_000))
        var now: Int64 = 1_000
        var mid: Int32 = 1
        for _ in 0..<40 {
            #expect(liveness.probeDue(atMs: now))
            liveness.probeSent(mid: mid, atMs: now)
            #expect(!liveness.probeDue(atMs: now + 2_499))
            // Answered after a 30 ms round trip.
            let answeredMid = liveness.answered(mid: mid)
            #expect(answeredMid)
            #expect(liveness.confirmedMs == now)
            #expect(!liveness.isCutOff(atMs: now + 2_500))
            #expect(liveness.nextWakeMs == now + 2_500)
            now += 2_500
            mid += 1
        }
        #expect(liveness.deadlineMs == now - 2_500 + 10_000)
    }

    @Test("unanswered: cut off a keep-alive after the last answered probe was sent, before the broker's 1.5 x")
    func cutOff() {
        var liveness = BrokerLiveness(keepAliveMs: 10_000, connectedAtMs: 0)
        liveness.probeSent(mid: 7, atMs: 0)
        liveness.answered(mid: 7)
        liveness.probeSent(mid: 8, atMs: 2_500)
        // The cut: mid 8 is never answered; no second probe while it is outstanding.
        #expect(!liveness.probeDue(atMs: 5_000))
        #expect(liveness.nextWakeMs == 10_000)
        #expect(!liveness.isCutOff(atMs: 9_999))
        #expect(liveness.isCutOff(atMs: 10_000))
        // The broker last heard this client at 2.5 s at the latest: its will is due at 15 s or later (margin 5 s).
        #expect(liveness.deadlineMs + 5_000 <= 2_500 + 15_000)
    }

    @Test("an answer to another packet id (a late or foreign UNSUBACK) confirms nothing")
    func foreignAnswer() {
        var liveness = BrokerLiveness(keepAliveMs: 8_000, connectedAtMs: 100)
        liveness.probeSent(mid: 3, atMs: 100)
        let foreign = liveness.answered(mid: 2)
        #expect(!foreign)
        #expect(liveness.outstanding?.mid == 3)
        #expect(liveness.confirmedMs == 100)
        let first = liveness.answered(mid: 3)
        #expect(first)
        let again = liveness.answered(mid: 3)
        #expect(!again)
    }

    @Test("a refused probe is tried again an interval later; the deadline still runs from the last answer")
    func refusedProbe() {
        var liveness = BrokerLiveness(keepAliveMs: 6_000, connectedAtMs: 0)
        liveness.probeFailed(atMs: 0)
        #expect(!liveness.probeDue(atMs: 1_499))
        #expect(liveness.probeDue(atMs: 1_500))
        #expect(liveness.nextWakeMs == 1_500)
        #expect(liveness.isCutOff(atMs: 6_000))
    }
}
