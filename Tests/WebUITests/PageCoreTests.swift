import BridgeCore
import Testing
import WebUI

@Suite struct PageCoreTests {
    @Test func aRequestGetsTheResponseCarryingItsTransaction() async throws {
        let broker = FakeBroker { topic, payload in
            guard topic == "ble/bridge/request/scan", let t = payload["transaction"]?.stringValue else { return [] }
            return [
                ("ble/bridge/response/scan", #"{"status":"ok","data":{"devices":[]},"transaction":"someone-else"}"#),
                ("ble/bridge/response/scan", #"{"status":"ok","data":{"devices":[1]},"transaction":"\#(t)"}"#),
            ]
        }
        let core = broker.makeCore(settings())
        let answer = await core.request(try JSONParser.parse(#"{"command":"scan","payload":{"seconds":1}}"#))
        #expect(answer.status == 200)
        let body = try JSONParser.parse(answer.body)
        #expect(body["data"]?["devices"] == [1])
        let sent = try #require(broker.published.withLock { $0.first })
        #expect(sent.topic == "ble/bridge/request/scan")
        let payload = try JSONParser.parse(sent.payload)
        #expect(payload["seconds"] == 1)
        #expect(payload["transaction"]?.stringValue?.hasPrefix("web-") == true)
        #expect(core.waiters.pendingCount == 0)
    }

    @Test func concurrentCommandsEachGetTheirOwnResult() async throws {
        let broker = FakeBroker()
        let core = broker.makeCore(settings())
        let set = try JSONParser.parse(
            #"{"device":"lamp","service":"light","characteristic":"power","op":"set","payload":{"raw":"01"}}"#)
        let get = try JSONParser.parse(#"{"device":"lamp","service":"light","characteristic":"power","op":"get"}"#)
        async let first = core.command(set)
        async let second = core.command(get)
        #expect(await eventually { broker.publishedCount == 2 })
        // Answer in reverse order of publishing; each answer names its transaction.
        for (topic, payload) in broker.published.withLock({ $0 }).reversed() {
            let t = try #require(try JSONParser.parse(payload)["transaction"]?.stringValue)
            let op = topic.hasSuffix("/set") ? "write" : "read"
            core.receive(
                topic: "ble/lamp/light/power/result",
                payload: Array(#"{"status":"ok","op":"\#(op)","transaction":"\#(t)"}"#.utf8))
        }
        let (a, b) = await (first, second)
        #expect(try JSONParser.parse(a.body)["op"] == "write")
        #expect(try JSONParser.parse(b.body)["op"] == "read")
        let topics = broker.published.withLock { $0.map(\.topic) }.sorted()
        #expect(topics == ["ble/lamp/light/power/get", "ble/lamp/light/power/set"])
    }

    @Test func noAnswerIsATimeout() async throws {
        var s = settings()
        s.commandTimeout = .milliseconds(50)
        let broker = FakeBroker()
        let core = broker.makeCore(s)
        let answer = await core.command(
            try JSONParser.parse(#"{"device":"lamp","service":"light","characteristic":"power","op":"get"}"#))
        #expect(answer.status == 504)
        #expect(try JSONParser.parse(answer.body)["error"]?["code"] == "timeout")
        #expect(core.waiters.pendingCount == 0)
    }

    @Test func aDisconnectedBrokerIsAnswered503AndABadBody400() async throws {
        let core = FakeBroker(connected: false).makeCore(settings())
        let offline = await core.request(try JSONParser.parse(#"{"command":"scan"}"#))
        #expect(offline.status == 503)
        #expect(try JSONParser.parse(offline.body)["error"]?["code"] == "not_connected")
        let bad = await core.command(try JSONParser.parse(#"{"device":"a/b","service":"s","characteristic":"c","op":"get"}"#))
        #expect(bad.status == 400)
        #expect(try JSONParser.parse(bad.body)["error"]?["code"] == "invalid_payload")
        #expect(core.waiters.pendingCount == 0)
    }

    @Test func messagesReachTheStoreAndTheLivePages() async throws {
        let core = FakeBroker().makeCore(settings())
        let page = try #require(core.hub.subscribe())
        core.receive(topic: "ble/kitchen/battery/level", payload: Array(#"{"value":90}"#.utf8))
        core.receive(topic: "ble/kitchen/battery/level/set", payload: Array("01".utf8))
        #expect(await page.queue.next() == [EventHub.frame(topic: "ble/kitchen/battery/level", payload: #"{"value":90}"#)])
        let snapshot = try JSONParser.parse(core.snapshotJSON())
        #expect(snapshot["base"] == "ble")
        #expect(snapshot["cluster"] == false)
        #expect(snapshot["messages"] == [["topic": "ble/kitchen/battery/level", "payload": #"{"value":90}"#]])
    }
}

@Suite struct PageOutboundTests {
    @Test func requestTopicsWithAndWithoutTheCluster() throws {
        let single = try PageOutbound.request(
            try JSONParser.parse(#"{"command":"device/add","payload":{"name":"pantry"}}"#), transaction: "web-1",
            settings: settings(), onlineBridges: [])
        #expect(single.topic == "ble/bridge/request/device/add")
        #expect(single.answerTopic == "ble/bridge/response/device/add")
        #expect(single.payload == ["name": "pantry", "transaction": "web-1"])
        #expect(single.timeout == .seconds(10))

        let first = try PageOutbound.request(
            try JSONParser.parse(#"{"command":"scan","bridge":null,"payload":{"seconds":30}}"#), transaction: "web-2",
            settings: settings(cluster: true), onlineBridges: ["attic", "kitchen"])
        #expect(first.topic == "ble/bridges/attic/request/scan")
        #expect(first.timeout == .seconds(40))
        let named = try PageOutbound.request(
            try JSONParser.parse(#"{"command":"scan","bridge":"kitchen"}"#), transaction: "web-3",
            settings: settings(cluster: true), onlineBridges: ["attic"])
        #expect(named.answerTopic == "ble/bridges/kitchen/response/scan")
        #expect(named.timeout == .seconds(20))
        #expect(throws: WebError.self) {
            try PageOutbound.request(
                try JSONParser.parse(#"{"command":"scan"}"#), transaction: "t", settings: settings(cluster: true),
                onlineBridges: [])
        }
    }

    @Test func invalidRequestsAreRefused() throws {
        for body in [
            #"{"command":"scan/+"}"#, #"{"command":"a/b/c"}"#, #"{"command":""}"#, #"{"command":"scan","payload":[1]}"#,
            #"[1]"#,
        ] {
            #expect(throws: WebError.self) {
                try PageOutbound.request(
                    try JSONParser.parse(body), transaction: "t", settings: settings(), onlineBridges: [])
            }
        }
    }

    @Test func commandPayloads() throws {
        let bare = try PageOutbound.command(
            try JSONParser.parse(#"{"device":"d","service":"s","characteristic":"c","op":"set","payload":21.5}"#),
            transaction: "web-1", settings: settings())
        #expect(bare.topic == "ble/d/s/c/set")
        #expect(bare.payload == ["value": 21.5, "transaction": "web-1"])
        #expect(bare.answerTopic == "ble/d/s/c/result")
        let named = try PageOutbound.command(
            try JSONParser.parse(#"{"device":"d","command":"open","payload":{"speed":2,"transaction":"x"}}"#),
            transaction: "web-2", settings: settings())
        #expect(named.topic == "ble/d/command/open/set")
        #expect(named.payload == ["speed": 2, "transaction": "web-2"])
        #expect(throws: WebError.self) {
            try PageOutbound.command(
                try JSONParser.parse(#"{"device":"d","service":"s","characteristic":"c","op":"set"}"#),
                transaction: "t", settings: settings())
        }
        #expect(throws: WebError.self) {
            try PageOutbound.command(
                try JSONParser.parse(##"{"device":"d","service":"s","characteristic":"#","op":"get"}"##),
                transaction: "t", settings: settings())
        }
    }
}
