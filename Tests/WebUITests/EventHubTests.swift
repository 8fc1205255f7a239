import Testing
@testable import WebUI

@Suite struct EventHubTests {
    @Test func aFrameIsOneDataLineOfJSONAndABlankLine() {
        let frame = String(decoding: EventHub.frame(topic: "ble/a\"b", payload: "line1\nline2 <img>"), as: UTF8.self)
        #expect(frame == #"data: {"topic":"ble/a\"b","payload":"line1\nline2 <img>"}"# + "\n\n")
        #expect(frame.dropLast(2).allSatisfy { $0 != "\n" && $0 != "\r" })
    }

    @Test func everyPageGetsEveryMessageInOrder() async throws {
        let hub = EventHub()
        let a = try #require(hub.subscribe())
        let b = try #require(hub.subscribe())
        hub.publish(topic: "ble/x", payload: "1")
        hub.publish(topic: "ble/x", payload: "2")
        hub.heartbeat()
        let expected = [
            EventHub.frame(topic: "ble/x", payload: "1"), EventHub.frame(topic: "ble/x", payload: "2"),
            EventHub.heartbeatFrame,
        ]
        #expect(await a.queue.next() == expected)
        #expect(await b.queue.next() == expected)
        hub.unsubscribe(a.id)
        #expect(hub.subscriberCount == 1)
    }

    @Test func aSlowPageIsDroppedAndTheOthersGoOn() async throws {
        let hub = EventHub(queueCapacity: 4)
        let slow = try #require(hub.subscribe())
        let fast = try #require(hub.subscribe())
        for index in 0..<4 { hub.publish(topic: "ble/x", payload: "\(index)") }
        #expect(await fast.queue.next()?.count == 4)
        hub.publish(topic: "ble/x", payload: "overflow")
        #expect(slow.queue.isClosed)
        #expect(await slow.queue.next() == nil)
        #expect(hub.droppedSubscribers == 1)
        #expect(hub.subscriberCount == 1)
        #expect(await fast.queue.next() == [EventHub.frame(topic: "ble/x", payload: "overflow")])
    }

    @Test func aWaitingPageWakesUpAndCloseEndsEveryStream() async throws {
        let hub = EventHub()
        let page = try #require(hub.subscribe())
        async let frames = page.queue.next()
        #expect(await eventually { page.queue.state.withLock { $0.waiter != nil } })
        hub.publish(topic: "ble/y", payload: "v")
        #expect(await frames == [EventHub.frame(topic: "ble/y", payload: "v")])
        hub.close()
        #expect(await page.queue.next() == nil)
        #expect(hub.subscribe() == nil)
    }
}
