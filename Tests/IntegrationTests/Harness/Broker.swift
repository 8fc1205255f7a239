import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A `mosquitto` broker on a loopback port, logging connections and subscriptions to a file.
final class Broker: @unchecked Sendable {
    /// The port it listens on.
    let port: Int
    /// The child process.
    let process: ChildProcess
    /// The broker's log.
    let logPath: String

    /// Starts a broker on `port` and returns once it accepts TCP connections.
    /// `listeners`: more listener sections (each with its own settings: `per_listener_settings`).
    static func start(
        port: Int, directory: String, listeners: String = "", timeout: Duration = .seconds(10)
    ) async throws -> Broker {
        let configPath = "\(directory)/mosquitto-\(port).conf"
        let logPath = "\(directory)/mosquitto.log"
        try """
            per_listener_settings true
            listener \(port) 127.0.0.1
            allow_anonymous true
            \(listeners)
            persistence false
            log_dest stderr
            log_timestamp true
            log_type error
            log_type warning
            log_type notice
            log_type information
            log_type subscribe
            connection_messages true

            """.write(toFile: configPath, atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            name: "mosquitto", executable: Paths.mosquitto, arguments: ["-c", configPath],
            environment: ProcessInfo.processInfo.environment, outputPath: logPath)
        let broker = Broker(port: port, process: process, logPath: logPath)
        let deadline = ContinuousClock.now + timeout
        // Ready when it logs "running" (it bound the port) and accepts. Accepting alone is not
        // enough: when another process took the port meanwhile, that one accepts while this
        // mosquitto exits with "Address already in use".
        while !(process.output.contains(" running\n") && process.isRunning && Broker.accepts(port: port)) {
            guard process.isRunning else {
                throw HarnessError("mosquitto exited (\(process.termination!)):\n\(process.tail())")
            }
            guard ContinuousClock.now < deadline else {
                await process.stop()
                throw HarnessError("mosquitto does not accept connections on port \(port) after \(timeout)")
            }
            // A listening socket has no event to await from here: poll at a short interval.
            try await Task.sleep(for: .milliseconds(10))
        }
        return broker
    }

    private init(port: Int, process: ChildProcess, logPath: String) {
        self.port = port
        self.process = process
        self.logPath = logPath
    }

    /// The broker's log so far.
    var log: String { ChildProcess.read(logPath) }

    /// Whether the log shows `client` subscribed to `topic` (`<time>: <client> <qos> <topic>`).
    func hasSubscription(client: String, topic: String) -> Bool {
        log.split(separator: "\n").contains { line in
            let fields = line.split(separator: " ")
            return fields.count == 4 && fields[1] == client && fields[3] == topic
        }
    }

    /// Stops the broker (SIGTERM, then SIGKILL).
    func stop() async {
        await process.stop(grace: .seconds(3))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func accepts(port: Int) -> Bool {
        withLoopbackSocket(port: port) { fd, address, length in connect(fd, address, length) == 0 }
    }

    /// A loopback TCP port that was free a moment ago, below the kernel's ephemeral range
    /// (32768-60999), so that no outgoing connection of a parallel test takes it meanwhile.
    /// Never the same port twice in this process: a test that starts its broker late (or
    /// restarts it) keeps its port unbound for a while, and a parallel test must not take it.
    static func freePort() throws -> Int {
        for _ in 0..<200 {
            let port = Int.random(in: 20000..<32768)
            guard canBind(port: port) else { continue }
            let fresh = handedOutLock.withLock { handedOut.insert(port).inserted }
            if fresh { return port }
        }
        throw HarnessError("no free port found in 20000-32767")
    }

    nonisolated(unsafe) private static var handedOut: Set<Int> = []  // guarded by handedOutLock
    private static let handedOutLock = NSLock()

    /// Whether 127.0.0.1:`port` can be bound right now.
    static func canBind(port: Int) -> Bool {
        withLoopbackSocket(port: port) { fd, address, length in bind(fd, address, length) == 0 }
    }

    /// Runs `body` with a new TCP socket and the address 127.0.0.1:`port`; closes the socket.
    private static func withLoopbackSocket(
        port: Int, _ body: (Int32, UnsafePointer<sockaddr>, socklen_t) -> Bool
    ) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                body(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
    }
}
