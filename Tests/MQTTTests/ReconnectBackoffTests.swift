import Testing

@testable import MQTT

@Suite("ReconnectBackoff")
struct ReconnectBackoffTests {
    @Test("backoff doubles from the initial delay up to the maximum, and resets")
    func backoff() {
        var backoff = ReconnectBackoff(initial: .milliseconds(500), maximum: .seconds(3))
        let delays = (0..<6).map { _ in backoff.next() }
        #expect(delays == [.milliseconds(500), .seconds(1), .seconds(2), .seconds(3), .seconds(3), .seconds(3)])
        backoff.reset()
        #expect(backoff.next() == .milliseconds(500))
    }

    @Test("backoff clamps nonsensical settings")
    func backoffClamps() {
        var backoff = ReconnectBackoff(initial: .zero, maximum: .zero)
        #expect(backoff.next() == .milliseconds(1))
        #expect(backoff.next() == .milliseconds(1))
        #expect(Duration.milliseconds(1500).pollMilliseconds == 1500)
        #expect(Duration.microseconds(1).pollMilliseconds == 1)
        #expect(Duration.seconds(-1).pollMilliseconds == 0)
        #expect(Duration.seconds(1_000_000_000).pollMilliseconds == Int32.max)
    }
}
