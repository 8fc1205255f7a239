import BridgeBase
import Foundation
import Synchronization
import Testing

@testable import MQTT

/// Clients on a ``PollLoop`` shared with other participants, as in the bridge (one I/O thread for
/// D-Bus, notification sockets and MQTT).
@Suite("MQTTClient on a shared PollLoop", .timeLimit(.minutes(2)))
struct SharedLoopTests {
    /// A started loop; stopped by the caller.
    func startedLoop(_ name: String = "shared") -> PollLoop {
        let loop = PollLoop(name: name)
        loop.start()
        return loop
    }

    /// A subscriber (own loop) whose subscription to `filter` is confirmed.
    func subscriber(_ broker: MosquittoBroker, _ filter: String, probe: String) async throws -> TestClient {
        let subscriber = try await TestClient.connected(try testConfiguration(broker, clientID: "subscriber"))
        subscriber.client.subscribe(filter, qos: 1)
        try await subscriber.confirmSubscription(topic: probe)
        return subscriber
    }

    @Test("a publish from a participant's handler is written in the same turn and reaches a subscriber")
    func publishFromLoopThread() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let loop = startedLoop()
        defer { loop.stop() }
        let topic = uniqueTopic("same-turn") + "/value"
        let subscriber = try await subscriber(broker, topic, probe: topic)

        let publisher = try await TestClient.connected(try testConfiguration(broker, clientID: "loop-publisher"), loop: loop)
        let client = publisher.client
        let session = client.session
        let counter = TurnCounter { !session.hasUnsentPackets }
        struct Record: Sendable {
            var turn: Int
            var failures: Int
            var queued: Bool
            var onLoopThread: Bool
        }
        let records = Mutex<[Record]>([])
        let burst = 5
        let pipe = PipeParticipant {
            let turn = counter.currentTurn
            var failures = 0
            for index in 0..<burst where client.publish(topic: topic, payload: Array("v\(index)".utf8)) != nil {
                failures += 1
            }
            let record = Record(
                turn: turn, failures: failures, queued: session.hasUnsentPackets, onLoopThread: loop.isCurrentThread)
            records.withLock { $0.append(record) }
        }
        // After the session (its probe runs once the session has ended the turn), before the pipe
        // (a turn that handles the pipe counts).
        loop.add(counter)
        loop.add(pipe)

        pipe.signal()
        for index in 0..<burst {
            let message = try await subscriber.messages.next { $0.topic == topic }
            #expect(message.payload == Array("v\(index)".utf8))
        }
        let record = try #require(records.withLock { $0.first })
        await counter.waitUntil(ended: record.turn)
        #expect(record.onLoopThread)
        #expect(record.failures == 0)
        // publish() only queued the packets; they were written before the turn ended.
        #expect(record.queued)
        #expect(counter.probe(ofTurn: record.turn) == true)

        await publisher.disconnect()
        await subscriber.disconnect()
    }

    @Test("publishes from other threads (and the loop thread) all arrive, in order per thread")
    func publishFromOtherThreads() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let loop = startedLoop()
        defer { loop.stop() }
        let prefix = uniqueTopic("threads")
        let subscriber = try await subscriber(broker, "\(prefix)/#", probe: "\(prefix)/probe")
        let publisher = try await TestClient.connected(try testConfiguration(broker, clientID: "many"), loop: loop)
        let client = publisher.client

        let perSource = 100
        let loopState = Mutex((index: 0, failures: 0))
        let pipe = PipeParticipant {
            let index = loopState.withLock { $0.index }
            let failed = client.publish(topic: "\(prefix)/loop", payload: Array("\(index)".utf8)) != nil
            loopState.withLock { state in
                state.index += 1
                if failed { state.failures += 1 }
            }
        }
        loop.add(pipe)

        await withTaskGroup(of: Void.self) { group in
            for source in 0..<4 {
                group.addTask {
                    for index in 0..<perSource {
                        let error = client.publish(
                            topic: "\(prefix)/thread\(source)", payload: Array("\(index)".utf8), qos: source % 2)
                        #expect(error == nil)
                    }
                }
            }
            group.addTask {
                for _ in 0..<perSource { pipe.signal() }
            }
        }

        var next: [String: Int] = [:]
        for _ in 0..<(5 * perSource) {
            let message = try await subscriber.messages.next { $0.topic.hasPrefix(prefix) && $0.topic != "\(prefix)/probe" }
            let index = Int(String(decoding: message.payload, as: UTF8.self)) ?? -1
            #expect(index == next[message.topic, default: 0], "\(message.topic)")
            next[message.topic] = index + 1
        }
        #expect(loopState.withLock { $0.failures } == 0)
        #expect(next.count == 5)
        #expect(next.values.allSatisfy { $0 == perSource })

        await publisher.disconnect()
        #expect(client.pendingAcknowledgements == 0)
        await subscriber.disconnect()
    }

    @Test("measured: loop turns and loop-thread wake-ups per value, published on the loop thread or from another")
    func turnsPerPublish() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let loop = startedLoop()
        defer { loop.stop() }
        let topic = uniqueTopic("measure") + "/value"
        let subscriber = try await subscriber(broker, topic, probe: topic)
        let publisher = try await TestClient.connected(try testConfiguration(broker, clientID: "measured"), loop: loop)
        let client = publisher.client
        let session = client.session
        let counter = TurnCounter { !session.hasUnsentPackets && !session.commands.hasPending }
        let publishTurns = Mutex<[Int]>([])
        let pipe = PipeParticipant {
            publishTurns.withLock { $0.append(counter.currentTurn) }
            _ = client.publish(topic: topic, payload: Array("loop".utf8))
        }
        loop.add(counter)
        loop.add(pipe)

        let count = 50
        // From the loop thread: a pipe event (one wake-up) whose handler publishes.
        var loopTurns = 0
        var loopSwitches = 0
        for _ in 0..<count {
            let turnsBefore = counter.endedTurns
            let switchesBefore = counter.voluntaryContextSwitches()
            pipe.signal()
            _ = try await subscriber.messages.next { $0.topic == topic }
            let turn = try #require(publishTurns.withLock { $0.last })
            await counter.waitUntil(ended: turn)
            #expect(counter.probe(ofTurn: turn) == true)
            loopTurns += counter.endedTurns - turnsBefore
            loopSwitches += counter.voluntaryContextSwitches() - switchesBefore
        }
        // From another thread: handed over, the loop woken.
        var otherTurns = 0
        var otherSwitches = 0
        for _ in 0..<count {
            let turnsBefore = counter.endedTurns
            let switchesBefore = counter.voluntaryContextSwitches()
            #expect(client.publish(topic: topic, payload: Array("other".utf8)) == nil)
            _ = try await subscriber.messages.next { $0.topic == topic }
            await counter.waitUntil(ended: turnsBefore + 1)
            // Written in the turn the wake-up started: the next one, unless a turn (the keep-alive
            // tick) had just ended when the message was handed over.
            var written = counter.probe(ofTurn: turnsBefore + 1) == true
            if !written {
                await counter.waitUntil(ended: turnsBefore + 2)
                written = counter.probe(ofTurn: turnsBefore + 2) == true
            }
            #expect(written)
            otherTurns += counter.endedTurns - turnsBefore
            otherSwitches += counter.voluntaryContextSwitches() - switchesBefore
        }
        let loopTurnsText = Double(loopTurns) / Double(count)
        let loopSwitchesText = Double(loopSwitches) / Double(count)
        let otherTurnsText = Double(otherTurns) / Double(count)
        let otherSwitchesText = Double(otherSwitches) / Double(count)
        print(
            "MQTT on a shared loop, per QoS 0 value (\(count) each): from the loop thread \(loopTurnsText) turns, "
                + "\(loopSwitchesText) loop-thread wake-ups; from another thread \(otherTurnsText) turns, "
                + "\(otherSwitchesText) wake-ups")
        // One turn per value, not two (the keep-alive tick, and in a full parallel test run other
        // work of the process, may add a few over the whole run).
        #expect(loopTurns < count * 3 / 2)
        #expect(otherTurns < count * 3 / 2)

        await publisher.disconnect()
        await subscriber.disconnect()
    }

    @Test("disconnect() on a shared loop sends DISCONNECT and detaches the session; the loop keeps running")
    func stopDetaches() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let loop = startedLoop()
        defer { loop.stop() }
        let counter = TurnCounter()
        let pipe = PipeParticipant {}
        loop.add(counter)
        loop.add(pipe)
        let topic = uniqueTopic("detach") + "/bridge/state"

        weak var weakSession: MosquittoSession?
        do {
            var configuration = try testConfiguration(broker, clientID: "detached")
            configuration.will = MQTTMessage(topic: topic, payload: Array("offline".utf8), qos: 1, retain: true)
            let test = try await TestClient.connected(configuration, loop: loop)
            weakSession = test.client.session
            #expect(test.client.publish(topic: topic, payload: Array("online".utf8), qos: 1, retain: true) == nil)
            await test.disconnect()
            #expect(try await test.expectDisconnected() == "disconnected by the client")
            try await test.events.waitForFinish()
            try await test.messages.waitForFinish()
            #expect(!test.client.isConnected)
            #expect(test.client.pendingAcknowledgements == 0)
            #expect(test.client.publish(topic: topic, payload: [1])?.code == .noConnection)
            let exited = test.client.session.exited.load(ordering: .acquiring)
            #expect(exited)
        }
        // The loop still turns for its other participants.
        #expect(loop.isRunning)
        let ended = counter.endedTurns
        pipe.signal()
        await counter.waitUntil(ended: ended + 1)
        // The loop no longer holds the session (the client is gone too).
        #expect(weakSession == nil)
        // DISCONNECT was sent: the broker did not publish the will over the retained "online".
        #expect(try await broker.receiveOne(topic: topic) == "\(topic) online")
    }

    @Test("after the broker restarts, the client on a shared loop reconnects, re-subscribes and publishes")
    func reconnectOnSharedLoop() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let loop = startedLoop()
        defer { loop.stop() }
        let prefix = uniqueTopic("shared-restart")
        let test = TestClient(try testConfiguration(broker, clientID: "shared-survivor"), loop: loop)
        let client = test.client
        test.client.subscribe("\(prefix)/#")
        test.client.start()
        try await test.expectConnected()
        try await test.confirmSubscription(topic: "\(prefix)/probe")

        await broker.stop()
        let reason = try await test.expectDisconnected()
        // (Under load an attempt may also have waited out its CONNACK before: that warning is not the point here.)
        let lost = try await test.logs.next { $0.level == .warning && $0.message.hasPrefix("connection to ") }
        #expect(lost.message == "connection to \(broker.url) lost: \(reason)")
        // Refused attempts are logged with the doubling delay while the broker is down.
        let failed = try await test.logs.next { $0.level == .warning && !$0.message.contains("no CONNACK") }
        #expect(failed.message.contains("connecting to \(broker.url) failed: Connection refused"))

        try await broker.start()
        try await test.expectConnected()
        try await test.confirmSubscription(topic: "\(prefix)/again")
        // A publish from the loop thread after the reconnection comes back through the subscription.
        let pipe = PipeParticipant {
            _ = client.publish(topic: "\(prefix)/from-loop", payload: Array("hello".utf8))
        }
        loop.add(pipe)
        pipe.signal()
        let message = try await test.messages.next { $0.topic == "\(prefix)/from-loop" }
        #expect(message.payload == Array("hello".utf8))
        await test.disconnect()
        #expect(loop.isRunning)
    }

    @Test("a shared loop stopped by its owner stops the client; disconnect() then returns at once")
    func loopStoppedUnderClient() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let loop = startedLoop()
        let test = try await TestClient.connected(try testConfiguration(broker, clientID: "orphan"), loop: loop)
        loop.stop()
        await test.client.session.exitWaiters.wait { test.client.session.exited.load(ordering: .acquiring) }
        #expect(!test.client.isConnected)
        #expect(test.client.publish(topic: "t", payload: [1])?.code == .noConnection)
        let clock = ContinuousClock()
        let elapsed = await clock.measure { await test.disconnect() }
        // Alone it returns within milliseconds; in a full parallel `swift test` the cooperative
        // pool is saturated and awaits take seconds, so the bound only says it does not hang.
        #expect(elapsed < .seconds(10))
        try await test.events.waitForFinish()
    }

    @Test("a client on a loop that never runs: disconnect() returns at once")
    func loopNeverStarted() async throws {
        let broker = try MosquittoBroker()  // never started
        let loop = PollLoop(name: "idle")
        let test = TestClient(try testConfiguration(broker, clientID: "idle"), loop: loop)
        test.client.start()
        #expect(!loop.isRunning)
        await test.disconnect()
        try await test.events.waitForFinish()
        #expect(!test.client.isConnected)
    }
    @Test("an attempt without CONNACK is given up after 10 s, also with a long keep-alive, and made again")
    func connectTimeout() async throws {
        let silent = try SilentListener()
        let loop = startedLoop()
        defer { loop.stop() }
        var configuration = MQTTConfiguration(host: "127.0.0.1", port: silent.port, clientID: "no-connack")
        configuration.keepAlive = .seconds(60)  // libmosquitto's own check would wait a minute
        configuration.reconnectDelay = .milliseconds(100)
        let test = TestClient(configuration, loop: loop)
        let clock = ContinuousClock()
        let started = clock.now
        test.client.start()
        let failed = try await test.logs.next(timeout: .seconds(30)) { $0.level == .warning }
        #expect(failed.message.contains("failed: no CONNACK within 10 s"), "\(failed)")
        #expect(clock.now - started >= .milliseconds(9500), "not before the timeout")
        // And made again: a second attempt fails the same way (no spin, no stall).
        let again = try await test.logs.next(timeout: .seconds(30)) { $0.level == .warning }
        #expect(again.message.contains("failed: no CONNACK within 10 s"), "\(again)")
        await test.disconnect()
    }

    @Test("connects that the server never answers (TCP and TLS) do not spin the loop; keep-alive abandons them")
    func unansweredConnects() async throws {
        // A listening socket that never accepts: the kernel completes the TCP handshake, then
        // nothing answers CONNECT or the TLS ClientHello.
        let silent = try SilentListener()
        let loop = startedLoop()
        defer { loop.stop() }
        let counter = TurnCounter()
        loop.add(counter)
        var plain = MQTTConfiguration(host: "127.0.0.1", port: silent.port, clientID: "unanswered-tcp")
        plain.keepAlive = .seconds(5)
        plain.reconnectDelay = .seconds(30)
        var tls = plain
        tls.clientID = "unanswered-tls"
        tls.tls = .init()
        let clients = [TestClient(plain, loop: loop), TestClient(tls, loop: loop)]
        let turnsBefore = counter.endedTurns
        let clock = ContinuousClock()
        let started = clock.now
        for test in clients { test.client.start() }
        for test in clients {
            let failed = try await test.logs.next(timeout: .seconds(20)) { $0.level == .warning }
            #expect(failed.message.contains("connecting to \(test.client.configuration.brokerURL) failed"), "\(failed)")
        }
        let elapsed = clock.now - started
        let turns = counter.endedTurns - turnsBefore
        print("MQTT: \(turns) loop turns in \(elapsed) of two unanswered connects (TCP and TLS)")
        #expect(elapsed >= .seconds(4))
        // About one turn a second per client (the keep-alive tick) plus the connects' own events;
        // a loop polling for a sticky want_write would make thousands.
        #expect(turns < 40)
        for test in clients { await test.disconnect() }
    }
}

