import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, its output going to a file.
///
/// Not `Foundation.Process`: a child spawned from a Swift concurrency (Dispatch worker) thread
/// inherits that thread's blocked signals, so SIGTERM would stay pending in it forever. This
/// spawns with an empty signal mask and default signal actions, like a shell would. The exit is
/// collected by `waitpid` on a dedicated thread (never on a concurrency thread), and awaited by
/// polling that thread's result.
final class ChildProcess: @unchecked Sendable {
    /// How a process ended.
    enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// `exit(code)`.
        case exited(Int32)
        /// Killed by a signal (a crash, or SIGKILL).
        case signaled(Int32)

        var description: String {
            switch self {
            case .exited(let code): return "exit status \(code)"
            case .signaled(let signal): return "killed by signal \(signal)"
            }
        }
    }

    /// A short name for messages (`bridge`, `bluez-sim`, ...).
    let name: String
    /// The process id.
    let pid: pid_t
    /// The file that receives stdout (and stderr unless `errorPath` was given).
    let outputPath: String
    /// The file that receives stderr.
    let errorPath: String

    private let lock = NSLock()
    private var ended: Termination?
    private var endedAt: ContinuousClock.Instant?

    /// Starts `executable` with `arguments` and exactly `environment`; stdin is `/dev/null`.
    init(
        name: String, executable: String, arguments: [String], environment: [String: String],
        outputPath: String, errorPath: String? = nil
    ) throws {
        self.name = name
        self.outputPath = outputPath
        self.errorPath = errorPath ?? outputPath
        guard access(executable, X_OK) == 0 else {
            throw HarnessError("\(name): no executable at \(executable)")
        }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let errorPath, errorPath != outputPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var mask = sigset_t()
        sigemptyset(&mask)
        posix_spawnattr_setsigmask(&attributes, &mask)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for signal in [SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGCHLD, SIGUSR1, SIGUSR2] {
            sigaddset(&defaults, signal)
        }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv: [UnsafeMutablePointer<CChar>?] = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp: [UnsafeMutablePointer<CChar>?] =
            environment.sorted { $0.key < $1.key }.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw HarnessError("\(name): cannot start \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
        let thread = Thread { [self] in self.reap() }
        thread.name = "waitpid \(name) \(child)"
        thread.start()
    }

    private func reap() {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            guard errno == EINTR else {
                lock.withLock { ended = .signaled(0) }
                return
            }
        }
        let signal = status & 0x7f
        let termination: Termination = signal == 0 ? .exited((status >> 8) & 0xff) : .signaled(signal)
        let now = ContinuousClock.now
        lock.withLock {
            ended = termination
            endedAt = now
        }
    }

    /// When the reaper thread saw the process end (a thread of its own: not delayed by a busy
    /// cooperative pool, as the return of ``waitForExit(timeout:)`` may be); `nil` while it runs.
    var exitedAt: ContinuousClock.Instant? { lock.withLock { endedAt } }

    /// How the process ended; `nil` while it runs.
    var termination: Termination? { lock.withLock { ended } }

    /// Whether the process still runs.
    var isRunning: Bool { termination == nil }

    /// Sends `signal` unless the process has ended.
    func send(_ signal: Int32) {
        guard isRunning else { return }
        kill(pid, signal)
    }

    /// Waits until the process ends; `nil` when it still runs after `timeout`.
    @discardableResult
    func waitForExit(timeout: Duration) async -> Termination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let termination { return termination }
            guard ContinuousClock.now < deadline else { return nil }
            // The reaper thread has no event to await from here; poll it at a short interval.
            try? await Task.sleep(for: .milliseconds(10))
        }
    }

    /// SIGTERM, then SIGKILL when the process still runs after `grace`; returns how it ended.
    @discardableResult
    func stop(grace: Duration = .seconds(5)) async -> Termination? {
        guard isRunning else { return termination }
        send(SIGTERM)
        if let termination = await waitForExit(timeout: grace) { return termination }
        send(SIGKILL)
        return await waitForExit(timeout: .seconds(5))
    }

    /// Everything the process wrote to stdout (and stderr when they share the file).
    var output: String { ChildProcess.read(outputPath) }

    /// Everything the process wrote to stderr.
    var errorOutput: String { ChildProcess.read(errorPath) }

    /// The last `count` lines of the output (and stderr when separate), for failure messages.
    func tail(_ count: Int = 40) -> String {
        var text = output
        if errorPath != outputPath { text += errorOutput }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        return lines.suffix(count).joined(separator: "\n")
    }

    static func read(_ path: String) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { return "" }
        return String(decoding: data, as: UTF8.self)
    }

    /// Runs a command to its end (at most `timeout`, then SIGKILL) and returns how it ended and
    /// its combined output.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
        directory: String, timeout: Duration = .seconds(30)
    ) async throws -> (termination: Termination, output: String) {
        let name = (executable as NSString).lastPathComponent
        let outputPath = "\(directory)/\(name)-\(UInt64.random(in: 0...UInt64.max)).out"
        defer { unlink(outputPath) }
        let process = try ChildProcess(
            name: name, executable: executable, arguments: arguments, environment: environment, outputPath: outputPath)
        guard let termination = await process.waitForExit(timeout: timeout) else {
            process.send(SIGKILL)
            await process.waitForExit(timeout: .seconds(5))
            throw HarnessError(
                "\(name) \(arguments.joined(separator: " ")) did not end within \(timeout); output:\n\(process.tail())")
        }
        return (termination, process.output)
    }
}
