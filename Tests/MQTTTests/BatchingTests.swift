import BridgeBase
import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import MQTT

/// A turn's publishes leave together: libmosquitto writes each packet with its own `write`, the
/// session corks the socket around the turn's flush, so the kernel sends full segments.
@Suite("Publishes of one turn are written together", .timeLimit(.minutes(1)))
struct BatchingTests {
    /// `tcpi_data_segs_out` of a TCP socket (Linux `struct tcp_info`, offset 156; glibc's copy of
    /// the struct predates the field).
    static func dataSegmentsOut(_ fd: Int32) -> UInt32? {
        var buffer = [UInt8](repeating: 0, count: 232)
        var length = socklen_t(buffer.count)
        guard getsockopt(fd, Int32(IPPROTO_TCP), TCP_INFO, &buffer, &length) == 0, length >= 160 else { return nil }
        return buffer.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 156, as: UInt32.self) }
    }

    @Test("20 publishes made in one loop turn go out in one or two TCP segments, not 20")
    func oneSegmentPerTurn() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let loop = PollLoop(name: "batching")
        loop.start()
        defer { loop.stop() }
        let topic = uniqueTopic("batch") + "/value"
        let subscriber = try await TestClient.connected(try testConfiguration(broker, clientID: "batch-subscriber"))
        subscriber.client.subscribe(topic, qos: 0)
        try await subscriber.confirmSubscription(topic: topic)
        let publisher = try await TestClient.connected(try testConfiguration(broker, clientID: "batcher"), loop: loop)
        let client = publisher.client
        let session = client.session
        let counter = TurnCounter { !session.hasUnsentPackets }
        let burst = Mutex(1)
        // (turn, socket, data segments before the burst)
        let started = Mutex<(turn: Int, fd: Int32, segments: UInt32)?>(nil)
        let pipe = PipeParticipant {
            let fd = session.socketDescriptor
            started.withLock { $0 = (counter.currentTurn, fd, Self.dataSegmentsOut(fd) ?? 0) }
            for index in 0..<burst.withLock({ $0 }) {
                _ = client.publish(topic: topic, payload: Array(#"{"index":\#(index),"value":21.5}"#.utf8))
            }
        }
        loop.add(counter)
        loop.add(pipe)

        var results: [Int: UInt32] = [:]
        for count in [1, 20] {
            burst.withLock { $0 = count }
            pipe.signal()
            for _ in 0..<count { _ = try await subscriber.messages.next { $0.topic == topic } }
            let start = try #require(started.withLock { $0 })
            await counter.waitUntil(ended: start.turn)
            #expect(counter.probe(ofTurn: start.turn) == true)
            let after = try #require(Self.dataSegmentsOut(start.fd))
            results[count] = after - start.segments
        }
        print("MQTT: TCP data segments for 1 publish in a turn: \(results[1] ?? 0); for 20: \(results[20] ?? 0)")
        #expect(results[1] == 1)
        #expect((results[20] ?? 99) <= 2)
        await publisher.disconnect()
        await subscriber.disconnect()
    }
    @Test("20,000 QoS 0 publishes from one handler on the loop thread: all accepted, written by the turn's end (time printed)")
    func burstOnLoopThread() async throws {
        let broker = try MosquittoBroker()
        try await broker.start()
        defer { broker.kill() }
        let loop = PollLoop(name: "burst")
        loop.start()
        defer { loop.stop() }
        let publisher = try await TestClient.connected(try testConfiguration(broker, clientID: "loop-burst"), loop: loop)
        let client = publisher.client
        let session = client.session
        let counter = TurnCounter { !session.hasUnsentPackets }
        let topic = uniqueTopic("loop-burst") + "/device/service/characteristic"
        let payload = Array(#"{"raw":"0148","value":{"bpm":72}}"#.utf8)
        let count = 20_000
        let result = Mutex<(turn: Int, failures: Int, elapsed: Duration)?>(nil)
        let pipe = PipeParticipant {
            let turn = counter.currentTurn
            var failures = 0
            let elapsed = ContinuousClock().measure {
                for _ in 0..<count where client.publish(topic: topic, payload: payload) != nil { failures += 1 }
            }
            result.withLock { $0 = (turn, failures, elapsed) }
        }
        loop.add(counter)
        loop.add(pipe)
        pipe.signal()
        while result.withLock({ $0 }) == nil {
            await counter.waitUntil(ended: counter.endedTurns + 1)
        }
        let outcome = try #require(result.withLock { $0 })
        await counter.waitUntil(ended: outcome.turn)
        print("MQTT publish on the loop thread: \(outcome.elapsed / count) per QoS 0 message (\(count) in one turn)")
        #expect(outcome.failures == 0)
        // The socket buffer may fill: then the rest is written on POLLOUT in the next turns.
        let deadline = outcome.turn + 10_000
        while counter.probe(ofTurn: counter.endedTurns) != true && counter.endedTurns < deadline {
            await counter.waitUntil(ended: counter.endedTurns + 1)
        }
        #expect(counter.probe(ofTurn: counter.endedTurns) == true)
        await publisher.disconnect()
    }
}
