import Testing

@testable import MQTT

@Suite("PublishTracker")
struct PublishTrackerTests {
    @Test("QoS 1/2 publishes stay pending until acknowledged, in either order")
    func tracker() {
        var tracker = PublishTracker()
        tracker.published(mid: 1, qos: 1)
        tracker.published(mid: 2, qos: 2)
        tracker.published(mid: 3, qos: 0)
        #expect(tracker.pendingAcknowledgements == 2)
        tracker.completed(mid: 1)
        tracker.completed(mid: 3)
        #expect(tracker.pendingAcknowledgements == 1)
        // Acknowledged before publish() registered the id.
        tracker.completed(mid: 4)
        tracker.published(mid: 4, qos: 1)
        #expect(tracker.pendingAcknowledgements == 1)
        tracker.completed(mid: 2)
        #expect(tracker.pendingAcknowledgements == 0)
        #expect(tracker.trackedCount == 0)
    }

    @Test("a lost connection forgets QoS 0 packets but keeps QoS 1/2 messages")
    func trackerConnectionLost() {
        var tracker = PublishTracker()
        tracker.published(mid: 1, qos: 0)
        tracker.published(mid: 2, qos: 1)
        tracker.connectionLost()
        #expect(tracker.trackedCount == 1)
        #expect(tracker.pendingAcknowledgements == 1)
        tracker.completed(mid: 2)
        #expect(tracker.pendingAcknowledgements == 0)
        #expect(tracker.trackedCount == 0)
    }
}
