import Foundation
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
            var pings: [String] = []
            // A rate is measured over real time: this window is the measurement, not a wait.
            let window = ContinuousClock.now + .milliseconds(3000)
            while ContinuousClock.now < window {
                if let message = await socket.receive(ms: 50) { pings.append(message) }
            }
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
private final class DatagramListener: Sendable {
    let fd: Int32

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
    }

    deinit { close(fd) }

    /// The next datagram, waiting at most `ms` without holding a thread of the cooperative pool.
    func receive(ms: Int32 = 2000) async -> String? {
        let deadline = ContinuousClock.now + .milliseconds(ms)
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 0) == 1 {
                var buffer = [UInt8](repeating: 0, count: 512)
                let n = recv(fd, &buffer, buffer.count, 0)
                return n >= 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
            }
            guard ContinuousClock.now < deadline else { return nil }
            // A socket in the cooperative pool has no event to await: poll it at a short interval.
            try? await Task.sleep(for: .milliseconds(2))
        }
    }
}
