import Testing

@testable import BridgeBase

@Suite("Backoff")
struct BackoffTests {
    @Test("without jitter the delay doubles from the initial delay up to the maximum, and resets")
    func doubling() {
        var backoff = Backoff(initial: .milliseconds(500), maximum: .seconds(3), jitter: 0, seed: 0)
        let delays = (0..<6).map { _ in backoff.next() }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3), .seconds(3)])
        backoff.reset()
        #expect(backoff.next() == .milliseconds(500))
    }

    @Test("nonsensical settings are clamped; durations convert for poll")
    func clamps() {
        var backoff = Backoff(initial: .zero, maximum: .zero, jitter: 0, seed: 0)
        #expect(backoff.next() == .milliseconds(1))
        #expect(backoff.next() == .milliseconds(1))
        #expect(Duration.milliseconds(1500).pollMilliseconds == 1500)
        #expect(Duration.microseconds(1).pollMilliseconds == 1)
        #expect(Duration.seconds(-1).pollMilliseconds == 0)
        #expect(Duration.seconds(1_000_000_000).pollMilliseconds == Int32.max)
        #expect(Duration.milliseconds(2500).inSeconds == 2.5)
    }

    @Test("jitter stays within ±jitter and the same seed gives the same delays")
    func jitter() {
        var a = Backoff(initial: .seconds(10), maximum: .seconds(10), jitter: 0.2, seed: 7)
        var b = Backoff(initial: .seconds(10), maximum: .seconds(10), jitter: 0.2, seed: 7)
        for _ in 0..<50 {
            let d = a.next()
            #expect(d == b.next())
            #expect(d >= .seconds(8) && d <= .seconds(10))
        }
    }
}
