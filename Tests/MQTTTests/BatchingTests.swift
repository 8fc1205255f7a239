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
        loop.add(pipe)
        loop.add(counter)

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
        await client.disconnect()
        await subscriber.client.disconnect()
    }
}
