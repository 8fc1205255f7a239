import Foundation
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The bridge under systemd's `Type=notify` and `WatchdogSec=`: `READY=1` once started,
/// `WATCHDOG=1` while its I/O loop turns, `STOPPING=1` at SIGTERM.
@Suite(.timeLimit(.minutes(2)))
struct SystemdNotifyTests {
    @Test("READY=1, then WATCHDOG=1 at half the timeout, then STOPPING=1 on SIGTERM")
    func notifications() async throws {
        let address = "@ble-mqtt-bridge-it-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let socket = try DatagramListener(abstract: address)
        var options = HarnessOptions()
        options.bridgeEnvironment = ["NOTIFY_SOCKET": address, "WATCHDOG_USEC": "1000000"]
        try await Harness.with(options) { harness in
            let bridge = try #require(harness.bridge)
            #expect(await socket.receive(ms: 10_000) == "READY=1")
            try await harness.waitUntilPublishing(Demo.connectedSegments)
            // Every 0.5 s while values flow through the loop: drain what came meanwhile, then
            // count over 3 s (about 6; a loaded machine may delay a turn, never stop them).
            var queued: [String] = []
            while let message = await socket.receive(ms: 0) { queued.append(message) }
            #expect(queued.allSatisfy { $0 == "WATCHDOG=1" }, "\(queued)")
            // A rate is measured over real time: this window is the measurement, not a wait. The
            // datagrams are counted by when they arrived (a reader thread stamps them), not by
            // when this task, which shares a busy pool with the other tests, gets to read them.
            let start = ContinuousClock.now
            try await Task.sleep(until: start + .milliseconds(3000))
            let pings = socket.arrivals(from: start, to: start + .milliseconds(3000))
            #expect(pings.allSatisfy { $0 == "WATCHDOG=1" }, "\(pings)")
            #expect((3...8).contains(pings.count), "\(pings.count) pings in 3 s")
            bridge.send(SIGTERM)
            var rest: [String] = []
            while let message = await socket.receive(ms: 3000) {
                rest.append(message)
                if message == "STOPPING=1" { break }
            }
            #expect(rest.last == "STOPPING=1", "\(rest)")
            let ended = await bridge.waitForExit(timeout: .seconds(12))
            #expect(ended == .exited(0))
            #expect(bridge.output.contains("systemd watchdog: 1.0 seconds"), "\(bridge.tail())")
        }
    }
}

/// A datagram socket in the abstract namespace, standing in for systemd's notification socket.
/// A thread of its own reads it and stamps each datagram with its arrival time.
private final class DatagramListener: Sendable {
    let fd: Int32
    /// What the reader thread shares with the test.
    private final class Inbox: Sendable {
        let items = Mutex<[(message: String, at: ContinuousClock.Instant)]>([])
        let stopped = Atomic<Bool>(false)
        let done = Atomic<Bool>(false)
    }
    private let inbox = Inbox()

    init(abstract name: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(name.utf8.dropFirst())
        withUnsafeMutableBytes(of: &address.sun_path) { path in
            for (i, b) in bytes.enumerated() { path[i + 1] = b }  // path[0] = 0: abstract
        }
        let size = socklen_t(MemoryLayout<sa_family_t>.size + 1 + bytes.count)
        let fd = self.fd
        let rc = withUnsafePointer(to: &address) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        guard rc == 0 else { throw HarnessError("bind \(name): errno \(errno)") }
        let inbox = self.inbox
        let thread = Thread {
            while !inbox.stopped.load(ordering: .relaxed) {
                var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&p, 1, 50) == 1 else { continue }
                var buffer = [UInt8](repeating: 0, count: 512)
                let n = recv(fd, &buffer, buffer.count, 0)
                guard n >= 0 else { continue }
                let message = String(decoding: buffer[0..<n], as: UTF8.self)
                let now = ContinuousClock.now
                inbox.items.withLock { $0.append((message, now)) }
            }
            inbox.done.store(true, ordering: .releasing)
        }
        thread.start()
    }

    deinit {
        inbox.stopped.store(true, ordering: .relaxed)
        // The reader polls at most 50 ms more before it sees the flag; the descriptor closes after.
        let deadline = ContinuousClock.now + .seconds(2)
        while !inbox.done.load(ordering: .acquiring) && ContinuousClock.now < deadline { usleep(5_000) }
        close(fd)
    }

    /// The next datagram not read yet, waiting at most `ms` (polling the inbox: no thread of the
    /// cooperative pool is held).
    func receive(ms: Int32 = 2000) async -> String? {
        let deadline = ContinuousClock.now + .milliseconds(ms)
        while true {
            if let first = inbox.items.withLock({ $0.isEmpty ? nil : $0.removeFirst() }) { return first.message }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }

    /// The datagrams that arrived in `[from, to)` and were not read yet, removed from the inbox.
    func arrivals(from: ContinuousClock.Instant, to: ContinuousClock.Instant) -> [String] {
        inbox.items.withLock { all in
            let picked = all.filter { $0.at >= from && $0.at < to }
            all.removeAll { $0.at >= from && $0.at < to }
            return picked.map(\.message)
        }
    }
}
