import Testing

@testable import MQTT

/// Tests against a real `mosquitto` broker (one per test, on its own loopback port).
@Suite("MQTTClient with a real mosquitto broker")
struct MQTTClientTests {
    @Test("publishing before start or after disconnect returns .noConnection")
    func publishWithoutConnection() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let test = TestClient(try testConfiguration(broker, clientID: "not-connected"))
        #expect(!test.client.isConnected)
        #expect(test.client.publish(topic: "t", payload: [1])?.code == .noConnection)
        #expect(test.client.publish(MQTTMessage(topic: "t", payload: [1], qos: 1))?.code == .noConnection)

        test.client.start()
        await test.client.waitUntilConnected()
        #expect(test.client.isConnected)
        #expect(test.client.publish(topic: "t", payload: [1]) == nil)

        await test.client.disconnect()
        #expect(!test.client.isConnected)
        #expect(test.client.publish(topic: "t", payload: [1])?.code == .noConnection)
    }

    @Test("connect, subscribe, publish and receive (QoS 0, 1, 2)")
    func roundTrip() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let prefix = uniqueTopic("roundtrip")
        let test = try await TestClient.connected(try testConfiguration(broker, clientID: "roundtrip"))
        let connectedLog = try await test.logs.next { $0.level == .info && $0.message.hasPrefix("connected to") }
        #expect(connectedLog.message == "connected to \(broker.url)")

        test.client.subscribe("\(prefix)/#", qos: 2)
        for qos in 0...2 {
            let payload: [UInt8] = [0, 1, 2, 0xFF, UInt8(qos)]
            let error = test.client.publish(topic: "\(prefix)/q\(qos)", payload: payload, qos: qos)
            #expect(error == nil)
            let message = try await test.messages.next { $0.topic == "\(prefix)/q\(qos)" }
            #expect(message.payload == payload)
            #expect(message.qos == qos)
            #expect(message.retain == false)
            #expect(message.responseTopic == nil)
            #expect(message.correlationData == nil)
        }

        // Messages from another client (mosquitto_pub) arrive too; an empty payload is fine.
        try await broker.publish(topic: "\(prefix)/external", message: "")
        let external = try await test.messages.next { $0.topic == "\(prefix)/external" }
        #expect(external.payload.isEmpty)

        // Invalid publishes are reported, not crashes.
        #expect(test.client.publish(topic: "\(prefix)/+", payload: [1]) != nil)
        #expect(test.client.publish(topic: "\(prefix)/x", payload: [1], qos: 3) != nil)

        await test.client.disconnect()
        let reason = try await test.expectDisconnected()
        #expect(reason == "disconnected by the client")
        try await test.events.waitForFinish()
        try await test.messages.waitForFinish()
    }

    @Test("a retained message is seen by a later mosquitto_sub; disconnect waits for acknowledgements")
    func retained() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let topic = uniqueTopic("retained") + "/state"
        let test = try await TestClient.connected(try testConfiguration(broker, clientID: "retainer"))
        for index in 0..<200 {
            #expect(test.client.publish(topic: topic + "/burst", payload: Array("\(index)".utf8), qos: 1) == nil)
        }
        #expect(test.client.publish(topic: topic, payload: Array("online".utf8), qos: 1, retain: true) == nil)
        // Even from a cancelled task (a service shutting down), disconnect() drains the queue first.
        let client = test.client
        let disconnecting = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await client.disconnect()
        }
        await disconnecting.value
        #expect(test.client.pendingAcknowledgements == 0)
        #expect(!test.client.isConnected)

        let output = try await broker.receiveOne(topic: topic)

        #expect(output == "\(topic) online")
    }

    @Test("the last will is published when the connection ends without DISCONNECT")
    func lastWill() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let willTopic = uniqueTopic("will") + "/bridge/state"

        let observer = try await TestClient.connected(try testConfiguration(broker, clientID: "observer"))
        observer.client.subscribe(willTopic, qos: 1)
        try await observer.confirmSubscription(topic: willTopic)

        var configuration = try testConfiguration(broker, clientID: "dying")
        configuration.will = MQTTMessage(topic: willTopic, payload: Array("offline".utf8), qos: 1, retain: true)
        let dying = try await TestClient.connected(configuration)

        dying.client.dropConnectionWithoutDisconnect()
        let will = try await observer.messages.next { $0.topic == willTopic }
        #expect(will.payload == Array("offline".utf8))
        #expect(will.qos == 1)
        _ = try await dying.expectDisconnected()
        // The will was retained: a later subscriber sees it too.
        #expect(try await broker.receiveOne(topic: willTopic) == "\(willTopic) offline")

        // After a clean disconnect the broker does not publish the will.
        try await dying.expectConnected()
        let retainedOnline = Array("online".utf8)
        #expect(dying.client.publish(topic: willTopic, payload: retainedOnline, qos: 1, retain: true) == nil)
        _ = try await observer.messages.next { $0.topic == willTopic && $0.payload == retainedOnline }
        await dying.client.disconnect()
        try await observer.confirmSubscription(topic: willTopic)
        #expect(try await broker.receiveOne(topic: willTopic) == "\(willTopic) online")
        await observer.client.disconnect()
    }

    @Test("MQTT v5 response topic and correlation data round trip")
    func v5Properties() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let prefix = uniqueTopic("v5")
        let responder = try await TestClient.connected(try testConfiguration(broker, clientID: "responder"))
        responder.client.subscribe("\(prefix)/request/#")
        try await responder.confirmSubscription(topic: "\(prefix)/request/probe")
        let v311 = try await TestClient.connected(try testConfiguration(broker, clientID: "old", version: .v311))
        v311.client.subscribe("\(prefix)/request/#")
        try await v311.confirmSubscription(topic: "\(prefix)/request/probe")

        let requester = try await TestClient.connected(try testConfiguration(broker, clientID: "requester"))
        requester.client.subscribe("\(prefix)/response/#")
        try await requester.confirmSubscription(topic: "\(prefix)/response/probe")

        let correlation: [UInt8] = [0, 1, 2, 0xFE, 0xFF]
        let request = MQTTMessage(
            topic: "\(prefix)/request/read", payload: Array("{}".utf8), qos: 1,
            responseTopic: "\(prefix)/response/42", correlationData: correlation)
        #expect(requester.client.publish(request) == nil)

        let received = try await responder.messages.next { $0.topic == request.topic }
        #expect(received.responseTopic == "\(prefix)/response/42")
        #expect(received.correlationData == correlation)
        #expect(received.payload == Array("{}".utf8))

        // An MQTT 3.1.1 client gets the message without properties.
        let old = try await v311.messages.next { $0.topic == request.topic }
        #expect(old.responseTopic == nil)
        #expect(old.correlationData == nil)
        #expect(old.payload == Array("{}".utf8))

        // Answer on the response topic, echoing the correlation data.
        let responseTopic = try #require(received.responseTopic)
        let response = MQTTMessage(
            topic: responseTopic, payload: Array("ok".utf8), qos: 1, correlationData: received.correlationData)
        #expect(responder.client.publish(response) == nil)
        let answer = try await requester.messages.next { $0.topic == responseTopic }
        #expect(answer.correlationData == correlation)
        #expect(answer.payload == Array("ok".utf8))

        // With MQTT 3.1.1 the properties are ignored when publishing.
        #expect(v311.client.publish(request) == nil)

        for client in [responder, v311, requester] {
            await client.client.disconnect()
        }
    }

    @Test("start() without a broker retries with backoff and connects once the broker is up")
    func brokerStartsLater() async throws {
        let broker = try MosquittoBroker()  // not started yet
        defer { broker.kill() }
        let test = TestClient(try testConfiguration(broker, clientID: "patient"))
        test.client.start()

        // One warning per failed attempt, with the reason and a doubling delay.
        let first = try await test.logs.next { $0.level == .warning }
        let second = try await test.logs.next { $0.level == .warning }
        #expect(first.message.contains("connecting to \(broker.url) failed: Connection refused"))
        #expect(first.message.hasSuffix("retrying in 100 ms"))
        #expect(second.message.hasSuffix("retrying in 200 ms"))
        #expect(!test.client.isConnected)

        try await broker.start()
        try await test.expectConnected(timeout: .seconds(20))
        #expect(test.client.isConnected)
        await test.client.waitUntilConnected()
        let connectedLog = try await test.logs.next { $0.level == .info }
        #expect(connectedLog.message == "connected to \(broker.url)")
        let logs = await test.logs.all
        // Nothing but warnings and the success message at info level or above.
        #expect(logs.allSatisfy { $0.level <= .info || $0.level == .warning })
        await test.client.disconnect()
    }

    @Test("subscriptions are restored after the broker restarts")
    func resubscribeAfterRestart() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let prefix = uniqueTopic("restart")
        let test = TestClient(try testConfiguration(broker, clientID: "survivor"))
        test.client.subscribe("\(prefix)/#")  // remembered before the first connection
        test.client.start()
        try await test.expectConnected()
        try await test.confirmSubscription(topic: "\(prefix)/probe")

        await broker.stop()
        let reason = try await test.expectDisconnected()
        #expect(!reason.isEmpty)
        let lost = try await test.logs.next { $0.level == .warning }
        #expect(lost.message == "connection to \(broker.url) lost: \(reason)")
        #expect(!test.client.isConnected)
        #expect(test.client.publish(topic: "\(prefix)/x", payload: [1])?.code == .noConnection)

        try await broker.start()
        try await test.expectConnected()
        // No subscribe() call here: the restarted broker knows the filter only if the client re-sent it.
        try await test.confirmSubscription(topic: "\(prefix)/again")
        try await broker.publish(topic: "\(prefix)/external", message: "hello")
        let message = try await test.messages.next { $0.topic == "\(prefix)/external" }
        #expect(message.payload == Array("hello".utf8))
        await test.client.disconnect()
    }

    @Test("disconnect() while retrying returns promptly and finishes the streams")
    func disconnectWhileRetrying() async throws {
        let broker = try MosquittoBroker()  // never started
        var configuration = try testConfiguration(broker, clientID: "quitter")
        configuration.reconnectDelay = .seconds(30)
        configuration.maxReconnectDelay = .seconds(30)
        let test = TestClient(configuration)
        test.client.start()
        _ = try await test.logs.next { $0.level == .warning }  // now sleeping 30 s before retrying

        let clock = ContinuousClock()
        let elapsed = await clock.measure { await test.client.disconnect() }
        #expect(elapsed < .seconds(5))
        try await test.events.waitForFinish()
        try await test.messages.waitForFinish()
        #expect(await test.events.all.isEmpty)
        await test.client.waitUntilConnected()  // returns: the client is stopped
        #expect(!test.client.isConnected)
        test.client.start()  // ignored after disconnect
        #expect(!test.client.isConnected)
    }

    @Test("waitUntilConnected() returns when its task is cancelled")
    func waitCancelled() async throws {
        let broker = try MosquittoBroker()  // never started
        let test = TestClient(try testConfiguration(broker, clientID: "waiter"))
        test.client.start()
        let waiter = Task { await test.client.waitUntilConnected() }
        waiter.cancel()
        await waiter.value
        #expect(!test.client.isConnected)
        await test.client.disconnect()
    }

    @Test("a client released without disconnect() stops its own loop and is freed")
    func releasedClient() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        weak var session: MosquittoSession?
        do {
            let test = try await TestClient.connected(try testConfiguration(broker, clientID: "released"))
            session = test.client.session
            #expect(session != nil)
        }
        // The loop holds the session until it is detached; nothing signals the release, so poll.
        let deadline = ContinuousClock.now + .seconds(10)
        while session != nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(session == nil)
    }

    @Test("20,000 back-to-back QoS 0 publishes are all accepted (the time is printed, not asserted)")
    func publishBurstAccepted() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let test = try await TestClient.connected(try testConfiguration(broker, clientID: "fast"))
        let topic = uniqueTopic("perf") + "/device/service/characteristic"
        let payload = Array(#"{"raw":"0148","value":{"bpm":72}}"#.utf8)
        let count = 20_000
        let clock = ContinuousClock()
        var failures = 0
        let elapsed = clock.measure {
            for _ in 0..<count where test.client.publish(topic: topic, payload: payload) != nil {
                failures += 1
            }
        }
        let perPublish = elapsed / count
        print("MQTT publish: \(perPublish) per QoS 0 message (\(count) messages)")
        // Speed belongs in BENCHMARKS.md, not in a timed test: only the outcome is checked here.
        #expect(failures == 0)
        await test.client.disconnect()
    }
}
