import TestSupport
import BridgeBase
import Logging
import Synchronization
import Testing

@testable import DBusKit

/// Replies sent from another thread while the I/O thread is busy reading: every one reaches the
/// caller at once. libdbus queues a message it cannot write while the I/O thread holds the
/// connection's I/O path, and only wakes the main loop; reading does not turn the write watch on,
/// so the loop must write it (seen once in CI as a `Ping` that waited for its 25 s timeout).
@Suite(.timeLimit(.minutes(1)))
struct DBusReplyFromTaskTests {
    let logger = Logger(label: "test")

    @Test func repliesFromTasksAreWrittenWhileTheLoopReads() async throws {
        let bus = try TestBus()
        let server = try DBusConnection.connect(address: bus.address, logger: logger)
        try await server.requestName("org.example.Echo")
        let objects = DBusObjectServer(connection: server, logger: logger)
        objects.addInterfaces(path: "/e", [
            DBusInterfaceExport(name: "org.example.Echo", methods: [
                "Ping": DBusMethod { _ in [.string("pong")] }
            ])
        ])
        defer { withExtendedLifetime(objects) {} }
        // The server follows large signals from a flooder: its I/O thread reads 2 KiB per turn
        // and holds the I/O path while it does.
        let flooder = try DBusConnection.connect(address: bus.address, logger: logger)
        let counters = Counters()
        let subscription = server.addSignalHandler(DBusMatchRule(interface: "org.example.Flood")) { _ in
            counters.heard.add(1, ordering: .relaxed)
        }
        defer { subscription.cancel() }
        let client = try DBusConnection.connect(address: bus.address, logger: logger)
        let payload = String(repeating: "x", count: 32 * 1024)
        let slow = try await withThrowingTaskGroup(of: Int.self) { group in
            group.addTask {
                // At most 64 signals (2 MiB) ahead of the server: enough to keep its I/O thread
                // reading, never enough to fill the bus's queue for it (a busy machine reads
                // slower than any fixed rate; the bus then refuses the Pings: LimitsExceeded).
                while !counters.done.load(ordering: .relaxed) {
                    if counters.sent.load(ordering: .relaxed) - counters.heard.load(ordering: .relaxed) < 64 {
                        flooder.emitSignal(path: "/f", interface: "org.example.Flood", name: "Data", arguments: [.string(payload)])
                        counters.sent.add(1, ordering: .relaxed)
                    }
                    try await Task.sleep(for: .microseconds(200))
                }
                return 0
            }
            var slow = 0
            for _ in 0..<1000 {
                let started = ContinuousClock.now
                let reply = try await client.call(
                    destination: "org.example.Echo", path: "/e", interface: "org.example.Echo",
                    method: "Ping", timeout: .seconds(10))
                #expect(reply == [.string("pong")])
                // A reply left unwritten waits for the call's 10 s timeout (the bug this guards
                // against); 5 s leaves room for a machine busy with other work.
                if ContinuousClock.now - started > .seconds(5) { slow += 1 }
            }
            counters.done.store(true, ordering: .relaxed)
            for try await s in group { slow += s }
            return slow
        }
        #expect(counters.heard.load(ordering: .relaxed) > 0)
        #expect(slow == 0, "\(slow) of 1000 replies took more than 5 s")
    }
}

private final class Counters: Sendable {
    let heard = Atomic<Int>(0)
    let sent = Atomic<Int>(0)
    let done = Atomic<Bool>(false)
}
