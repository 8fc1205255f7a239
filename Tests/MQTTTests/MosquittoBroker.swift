import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Errors of the test helpers.
struct TestHelperError: Error, CustomStringConvertible {
    var description: String
}

/// A real `mosquitto` broker on a loopback port, run as a child process for a test.
///
/// ```swift
/// let broker = try MosquittoBroker()
/// try await broker.start()
/// defer { broker.kill() }
/// ```
/// `stop()` and `start()` again restart it on the same port (no persistence: subscriptions and
/// retained messages are lost, as after a broker crash).
final class MosquittoBroker: @unchecked Sendable {
    /// The loopback port the broker listens on.
    let port: Int
    /// `mqtt://127.0.0.1:<port>`.
    var url: String { "mqtt://127.0.0.1:\(port)" }

    private let directory: URL
    private let configFile: URL
    private let lock = NSLock()
    private var running: (process: Process, exited: AsyncStream<Void>)?

    /// Prepares a broker on `port`, or on a free loopback port. Does not start it.
    /// `extraConfiguration` is appended to the configuration file (more listeners), given the
    /// broker's directory.
    init(port: Int? = nil, extraConfiguration: (_ directory: String) -> String = { _ in "" }) throws {
        self.port = try port ?? MosquittoBroker.freeLoopbackPort()
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("mqtt-tests-\(getpid())-\(self.port)-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        configFile = directory.appendingPathComponent("mosquitto.conf")
        let extra = extraConfiguration(directory.path)
        let config = """
            \(extra.isEmpty ? "" : "per_listener_settings true")
            listener \(self.port) 127.0.0.1
            allow_anonymous true
            persistence false
            log_dest stderr
            log_type error
            log_type warning
            \(getuid() == 0 ? "user root" : "")
            \(extra)

            """
        try config.write(to: configFile, atomically: true, encoding: .utf8)
    }

    deinit {
        kill()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Starts `/usr/sbin/mosquitto` and returns once it accepts TCP connections.
    func start(timeout: Duration = .seconds(10)) async throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        process.arguments = ["-c", configFile.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let exited = AsyncStream<Void>.makeStream()
        process.terminationHandler = { _ in exited.continuation.finish() }
        try process.run()
        lock.withLock { running = (process, exited.stream) }
        let deadline = ContinuousClock.now + timeout
        while !MosquittoBroker.canConnect(port: port) {
            guard process.isRunning else {
                throw TestHelperError(description: "mosquitto exited with status \(process.terminationStatus)")
            }
            guard ContinuousClock.now < deadline else {
                throw TestHelperError(description: "mosquitto did not listen on port \(port) within \(timeout)")
            }
            // Polling a TCP port has no event to await; keep the interval short.
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Stops the broker abruptly (SIGKILL, as in a crash) and waits until it has exited.
    ///
    /// SIGKILL rather than SIGTERM: a child spawned from a Dispatch worker thread inherits that
    /// thread's blocked signals, and mosquitto keeps the mask it started with, so SIGTERM would
    /// stay pending forever.
    func stop() async {
        guard let running = takeRunning() else { return }
        Glibc.kill(running.process.processIdentifier, SIGKILL)
        for await _ in running.exited {}
    }

    /// Kills the broker (SIGKILL) without waiting.
    func kill() {
        if let running = takeRunning() {
            Glibc.kill(running.process.processIdentifier, SIGKILL)
        }
    }

    private func takeRunning() -> (process: Process, exited: AsyncStream<Void>)? {
        lock.withLock {
            defer { running = nil }
            return running
        }
    }

    /// Runs `mosquitto_sub -C 1 -v -t topic` against this broker and returns its output
    /// (`topic payload`), or throws if nothing arrives within `timeout`.
    ///
    /// Not `mosquitto_sub -W`: its timer is SIGALRM, which stays blocked in a child spawned from a
    /// Dispatch thread (see ``stop()``); ``run(_:_:timeout:)`` kills the program instead.
    func receiveOne(topic: String, timeout: Duration = .seconds(10)) async throws -> String {
        let (status, output) = try await MosquittoBroker.run(
            "/usr/bin/mosquitto_sub",
            ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-C", "1", "-v"], timeout: timeout)
        guard status == 0 else {
            throw TestHelperError(description: "mosquitto_sub exited with status \(status): \(output)")
        }
        return output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Publishes with `mosquitto_pub`.
    func publish(topic: String, message: String, qos: Int = 1, retain: Bool = false) async throws {
        var arguments = ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-m", message, "-q", "\(qos)"]
        if retain { arguments.append("-r") }
        let (status, output) = try await MosquittoBroker.run("/usr/bin/mosquitto_pub", arguments)
        guard status == 0 else {
            throw TestHelperError(description: "mosquitto_pub exited with status \(status): \(output)")
        }
    }

    // MARK: - Helpers

    /// A loopback TCP port that was free a moment ago (bind to port 0, read the port, close).
    static func freeLoopbackPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestHelperError(description: "socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0 else { throw TestHelperError(description: "bind() failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let named = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard named == 0 else { throw TestHelperError(description: "getsockname() failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Whether something accepts TCP connections on 127.0.0.1:`port`.
    static func canConnect(port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return rc == 0
    }

    /// Runs a program to completion; returns its exit status and its standard output and error.
    ///
    /// The output goes to a temporary file, not a pipe: Foundation's `Pipe` descriptors are not
    /// close-on-exec, so a child spawned concurrently by another test (a broker) could inherit the
    /// write end and a read until EOF would never end.
    /// A program still running after `timeout` is killed (and the call throws).
    static func run(
        _ executable: String, _ arguments: [String], timeout: Duration = .seconds(15)
    ) async throws -> (Int32, String) {
        let outputURL = FileManager.default.temporaryDirectory
            .appendingPathComponent("mqtt-tests-output-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
        guard FileManager.default.createFile(atPath: outputURL.path, contents: nil) else {
            throw TestHelperError(description: "cannot create \(outputURL.path)")
        }
        defer { try? FileManager.default.removeItem(at: outputURL) }
        let output = try FileHandle(forWritingTo: outputURL)
        defer { try? output.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardOutput = output
        process.standardError = output
        let exited = AsyncStream<Int32>.makeStream()
        process.terminationHandler = { process in
            exited.continuation.yield(process.terminationStatus)
            exited.continuation.finish()
        }
        try process.run()
        let pid = process.processIdentifier
        let killer = Task {
            try await Task.sleep(for: timeout)
            Glibc.kill(pid, SIGKILL)
            // Should Foundation never report the exit, the wait ends anyway.
            try await Task.sleep(for: .seconds(2))
            exited.continuation.finish()
        }
        var status: Int32?
        for await value in exited.stream { status = value }
        killer.cancel()
        let data = try Data(contentsOf: outputURL)
        let text = String(decoding: data, as: UTF8.self)
        guard let status else {
            throw TestHelperError(description: "\(executable) did not exit after SIGKILL (timeout \(timeout)): \(text)")
        }
        if process.terminationReason == .uncaughtSignal {
            throw TestHelperError(
                description: "\(executable) killed by signal \(status) (timeout \(timeout)?): \(text)")
        }
        return (status, text)
    }
}
