import Foundation
import TestSupport
import Testing

@testable import MQTT

/// A broker that goes silent while the TCP connection stays up (SPEC §10 rule 7), through a ``TCPRelay``.
@Suite("MQTTClient cut off from its broker")
struct CutOffTests {
    /// A client through `relay` with a 5 s keep-alive and the probe.
    private func configuration(
        _ broker: MosquittoBroker, relay: TCPRelay, clientID: String, forget: Bool = false
    ) throws -> MQTTConfiguration {
        var configuration = try testConfiguration(broker, clientID: clientID)
        configuration.port = relay.port
        configuration.keepAlive = .seconds(5)
        configuration.probeTopic = "test/\(clientID)/keepalive"
        configuration.forgetUnsentOnLoss = forget
        return configuration
    }

    @Test("silence is noticed within the keep-alive, before the broker's 1.5 x; the client reconnects once healed")
    func noticedWithinKeepAlive() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let relay = try TCPRelay(upstreamPort: broker.port)
        defer { relay.stop() }
        let test = try await TestClient.connected(try configuration(broker, relay: relay, clientID: "silenced"))
        // A few probe rounds pass on a healthy connection without a loss.
        try await Task.sleep(for: .seconds(3))
        #expect(test.client.isConnected)
        let events = await test.events.all
        #expect(!events.contains { if case .disconnected = $0 { return true } else { return false } })

        let cut = Date().timeIntervalSince1970
        relay.silenced = true
        let reason = try await test.expectDisconnected(timeout: .seconds(20))
        let noticed = Date().timeIntervalSince1970 - cut
        #expect(reason.hasPrefix("no answer to the keep-alive probes"), "\(reason)")
        #expect(noticed < 7.5, "noticed \(noticed) s after the cut (keep-alive 5 s: the will is due at 7.5 s)")
        // At least the quarter keep-alive since the last answered probe was sent (3.75 s) had to pass.
        #expect(noticed > 3.5, "noticed \(noticed) s after the cut: too early for a keep-alive of 5 s")
        // The relay saw the client close its side (on the relay's thread: a moment later).
        let closedBy = ContinuousClock.now + .seconds(10)
        while !relay.events.contains(where: { if case .clientClosed = $0 { return true } else { return false } }) {
            guard ContinuousClock.now < closedBy else {
                Issue.record("the relay never saw the client close: \(relay.events)")
                break
            }
            try await Task.sleep(for: .milliseconds(20))
        }

        relay.silenced = false
        try await test.expectConnected(timeout: .seconds(30))
        await test.disconnect()
    }

    @Test("forgetUnsentOnLoss: a QoS 1 message queued while cut off is not sent after the reconnection (without it, it is)", arguments: [true, false])
    func forgetsUnsent(forget: Bool) async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let relay = try TCPRelay(upstreamPort: broker.port)
        defer { relay.stop() }
        let id = forget ? "forgetter" : "keeper"
        let test = try await TestClient.connected(try configuration(broker, relay: relay, clientID: id, forget: forget))
        let topic = uniqueTopic(id) + "/availability"
        #expect(test.client.publish(topic: topic, payload: Array("online".utf8), qos: 1, retain: true) == nil)
        #expect(try await broker.receiveOne(topic: topic) == "\(topic) online")

        // The broker ends the silent session at 1.5 × keep-alive (the dangerous case: its will is out, another
        // client may act on it); the network heals only after that.
        relay.expireSilentAfter = .milliseconds(7_500)
        relay.silenced = true
        // Queued (the client does not know yet): written into the silence, unacknowledged.
        #expect(test.client.publish(topic: topic, payload: Array("stale".utf8), qos: 1, retain: true) == nil)
        _ = try await test.expectDisconnected(timeout: .seconds(20))
        let deadline = ContinuousClock.now + .seconds(20)
        while !relay.events.contains(where: { if case .expired = $0 { return true } else { return false } }) {
            #expect(ContinuousClock.now < deadline, "the relay never ended the session: \(relay.events)")
            guard ContinuousClock.now < deadline else { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        // While away nothing is taken, in both modes.
        #expect(test.client.publish(MQTTMessage(topic: topic, payload: Array("away".utf8), qos: 1, retain: true))?.code == .noConnection)
        relay.silenced = false
        try await test.expectConnected(timeout: .seconds(30))
        // A marker published after the reconnection: once it is retained, anything sent before it is too.
        #expect(test.client.publish(topic: topic + "/marker", payload: Array("m".utf8), qos: 1, retain: true) == nil)
        #expect(try await broker.receiveOne(topic: topic + "/marker") == "\(topic)/marker m")
        #expect(try await broker.receiveOne(topic: topic) == "\(topic) \(forget ? "online" : "stale")")
        #expect(test.client.pendingAcknowledgements == 0)
        await test.disconnect()
    }
}
