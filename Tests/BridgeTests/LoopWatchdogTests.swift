import BridgeBase
import Logging
import Synchronization
import Testing

@testable import Bridge

#if canImport(Glibc)
import Glibc
#endif

/// Collects log messages.
private struct CollectingLogHandler: LogHandler {
    let sink: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        sink.lines.withLock { $0.append("\(event.level) \(event.message)") }
    }
}

private final class Lines: Sendable {
    let lines = Mutex<[String]>([])
    var logger: Logger { Logger(label: "watchdog-test") { _ in CollectingLogHandler(sink: self) } }
    var all: [String] { lines.withLock { $0 } }
}

@Suite struct LoopWatchdogTests {
    static func listenerAddress() -> String { "@ble-mqtt-bridge-watchdog-\(getpid())-\(UInt32.random(in: 0...UInt32.max))" }

    /// Every datagram the listener gets within `ms`.
    static func drain(_ listener: NotifyListener, ms: Int32) async -> [String] {
        var out: [String] = []
        while let m = await listener.receive(ms: ms) { out.append(m) }
        return out
    }

    @Test("a turning loop: READY=1, WATCHDOG=1 every period, STOPPING=1 when cancelled")
    func turningLoop() async throws {
        let listener = NotifyListener(address: Self.listenerAddress())
        let loop = PollLoop(name: "watchdog-test")
        loop.start()
        defer { loop.stop() }
        let log = Lines()
        let watchdog = LoopWatchdogService(
            loop: loop, notifier: SystemdNotifier(socketPath: listener.address, watchdogTimeout: .milliseconds(400)),
            logger: log.logger)
        #expect(watchdog.period == .milliseconds(200), "half the watchdog's timeout")
        let task = Task { try await watchdog.run() }
        #expect(await listener.receive() == "READY=1")
        for _ in 0..<4 { #expect(await listener.receive() == "WATCHDOG=1") }
        task.cancel()
        _ = try? await task.value
        let rest = await Self.drain(listener, ms: 200)
        #expect(rest.last == "STOPPING=1", "\(rest)")
        // A turning loop is never called stuck: only a job that waited two periods is (a busy
        // machine may run one late, not 400 ms late while this test's own tasks run).
        #expect(!log.all.contains { $0.hasPrefix("error") })
    }

    @Test("a loop that runs no job: no ping, an error once after two periods, then pings when it turns")
    func stuckLoop() async throws {
        let listener = NotifyListener(address: Self.listenerAddress())
        let loop = PollLoop(name: "watchdog-test")  // not started yet: it runs no job
        defer { loop.stop() }
        let log = Lines()
        let watchdog = LoopWatchdogService(
            loop: loop, notifier: SystemdNotifier(socketPath: listener.address, watchdogTimeout: .milliseconds(100)),
            logger: log.logger)
        let task = Task { try await watchdog.run() }
        defer { task.cancel() }
        #expect(await listener.receive() == "READY=1")
        // The ping comes from the loop: none while it runs no job. The error comes once the job
        // has waited two periods (awaited, at most 10 s: a loaded machine may run the watchdog late).
        var during: [String] = []
        let giveUp = ContinuousClock.now + .seconds(10)
        while !log.all.contains(where: { $0.hasPrefix("error") }) && ContinuousClock.now < giveUp {
            if let message = await listener.receive(ms: 20) { during.append(message) }
        }
        during += await Self.drain(listener, ms: 150)
        #expect(during.isEmpty, "\(during)")
        let errors = log.all.filter { $0.hasPrefix("error") }
        #expect(errors.count == 1, "\(log.all)")
        #expect(errors.first?.contains("the I/O loop has not run a job") == true)
        loop.start()
        #expect(await listener.receive() == "WATCHDOG=1")
        // The notice comes with the next period's look (awaited, as above).
        let noticeBy = ContinuousClock.now + .seconds(10)
        while !log.all.contains(where: { $0.hasPrefix("notice") && $0.contains("turns again") }) && ContinuousClock.now < noticeBy {
            _ = await listener.receive(ms: 20)
        }
        #expect(log.all.contains { $0.hasPrefix("notice") && $0.contains("turns again") })
    }
}

/// A datagram socket standing in for systemd's notification socket: a path, or `@name` in the
/// abstract namespace.
final class NotifyListener: Sendable {
    let fd: Int32
    let address: String

    init(address: String) {
        self.address = address
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        var sa = sockaddr_un()
        sa.sun_family = sa_family_t(AF_UNIX)
        var name = Array(address.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 }
        withUnsafeMutableBytes(of: &sa.sun_path) { path in for i in 0..<name.count { path[i] = name[i] } }
        let size = socklen_t(MemoryLayout<sa_family_t>.size + name.count + (name.first == 0 ? 0 : 1))
        let fd = self.fd
        let rc = withUnsafePointer(to: &sa) { p in
            p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, size) }
        }
        precondition(rc == 0, "bind \(address): errno \(errno)")
    }

    deinit {
        close(fd)
        if address.hasPrefix("/") { unlink(address) }
    }

    /// The next datagram, waiting at most `ms` without holding a thread of the cooperative pool (the
    /// default is long: it waits for something that must come, and the parallel unit run can starve
    /// the watchdog task for seconds: a clean-clone run once missed READY=1 within 2 s).
    func receive(ms: Int32 = 10_000) async -> String? {
        let deadline = ContinuousClock.now + .milliseconds(ms)
        while true {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&p, 1, 0) == 1 {
                var buffer = [UInt8](repeating: 0, count: 512)
                let n = recv(fd, &buffer, buffer.count, 0)
                return n >= 0 ? String(decoding: buffer[0..<n], as: UTF8.self) : nil
            }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(2))
        }
    }
}
