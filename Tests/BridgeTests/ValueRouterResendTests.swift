import Testing

@testable import Bridge

/// Home Assistant's resend of the last values (``ValueRouter/resendLast(devices:)``) runs on the supervisor's
/// executor while values keep coming on the I/O thread: it must never put an older value after a newer one.
@Suite struct ValueRouterResendTests {
    @Test("a resend racing the value path never publishes an older value after a newer one")
    func resendKeepsTheOrder() async {
        let broker = FakeBroker()
        let clock = FakeClock()
        let router = ValueRouter(mqtt: broker, clock: clock, keepsLast: true)
        let topics = (0..<4).map { "ble/dev\($0)/180d/2a37" }
        let values = 20_000
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for index in 0..<values {
                    let counter = UInt32(index)
                    let payload = [UInt8(counter >> 24), UInt8(counter >> 16 & 0xFF), UInt8(counter >> 8 & 0xFF), UInt8(counter & 0xFF)]
                    router.publish(
                        topic: topics[index % topics.count], payload: payload, device: "dev\(index % topics.count)", at: clock.now)
                }
            }
            group.addTask {
                for _ in 0..<4_000 { _ = router.resendLast(devices: nil) }
            }
        }
        var last: [String: UInt32] = [:]
        var backwards: [String] = []
        var resent = 0
        for published in broker.all where topics.contains(published.message.topic) {
            let bytes = published.message.payload
            let value = bytes.reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
            if let previous = last[published.message.topic] {
                if value < previous { backwards.append("\(published.message.topic): \(value) after \(previous)") }
                if value == previous { resent += 1 }
            }
            last[published.message.topic] = value
        }
        #expect(backwards.isEmpty, "\(backwards.count) values older than one already published, e.g. \(backwards.prefix(3))")
        #expect(resent > 0, "the resend ran while values came")
        #expect(last.count == topics.count)
    }
}
