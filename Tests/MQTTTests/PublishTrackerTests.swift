import Testing

@testable import MQTT

@Suite("PublishTracker")
struct PublishTrackerTests {
    @Test("QoS 1/2 publishes stay pending until acknowledged; QoS 0 ones are not tracked")
    func tracker() {
        var tracker = PublishTracker()
        tracker.published(mid: 1, qos: 1)
        tracker.published(mid: 2, qos: 2)
        tracker.published(mid: 3, qos: 0)
        #expect(tracker.pendingAcknowledgements == 2)
        #expect(tracker.completed(mid: 1) == false)
        // on_publish for the QoS 0 message (after its write) changes nothing.
        #expect(tracker.completed(mid: 3) == false)
        #expect(tracker.pendingAcknowledgements == 1)
        #expect(tracker.completed(mid: 2) == true)
        #expect(tracker.pendingAcknowledgements == 0)
        // A completion for an id never tracked (QoS 0) leaves nothing behind.
        #expect(tracker.completed(mid: 9) == true)
        #expect(tracker.pendingAcknowledgements == 0)
    }
}

@Suite("Publish validation (the checks made before handing a message to the loop)")
struct PublishValidationTests {
    func validate(
        _ topic: String, payload: Int = 1, qos: Int = 0, responseTopic: String? = nil, correlation: [UInt8]? = nil,
        v5: Bool = true
    ) -> MQTTError? {
        Mosquitto.validatePublish(
            topic: topic, payloadCount: payload, qos: qos, responseTopic: responseTopic, correlationData: correlation,
            isV5: v5)
    }

    @Test("valid messages pass; libmosquitto's codes for the invalid ones")
    func codes() {
        #expect(validate("a/b") == nil)
        #expect(validate("a/b", qos: 2, responseTopic: "r/1", correlation: [1, 2]) == nil)
        #expect(validate("")?.code == .other(3))
        #expect(validate("a/+")?.code == .other(3))
        #expect(validate("a/#")?.code == .other(3))
        #expect(validate("a", qos: 3)?.code == .other(3))
        #expect(validate("a", qos: -1)?.code == .other(3))
        #expect(validate("a", payload: 268_435_456)?.code == .payloadTooLarge)
        #expect(validate("a", correlation: Array(repeating: 0, count: 65536))?.code == .payloadTooLarge)
        // MQTT 3.1.1 ignores the properties.
        #expect(validate("a", correlation: Array(repeating: 0, count: 65536), v5: false) == nil)
        #expect(validate(String(repeating: "t", count: 65536))?.code == .other(3))
    }
}
