import Foundation

/// Starting the parts every harness runs (``Harness``, ``ClusterHarness``'s hosts): a private dbus-daemon and
/// bluez-sim, each waited for, and the temporary directory they work in.
enum Launch {
    /// A new directory from `prefix` + a unique suffix (`mkdtemp`).
    static func temporaryDirectory(_ prefix: String) throws -> String {
        var template = Array("\(prefix).XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { throw HarnessError("mkdtemp failed") }
        return String(cString: created)
    }

    /// Starts a private dbus-daemon (scripts/sim/dbus.conf) on `directory/bus` and waits for its address.
    static func bus(in directory: String, name: String, timeout: Duration) async throws -> (ChildProcess, address: String) {
        let socket = "\(directory)/bus"
        let process = try ChildProcess(
            name: name, executable: Paths.dbusDaemon,
            arguments: [
                "--config-file=\(Paths.busConfig)", "--address=unix:path=\(socket)", "--nofork", "--print-address=1",
            ],
            environment: ProcessInfo.processInfo.environment, outputPath: "\(directory)/bus.address",
            errorPath: "\(directory)/dbus-daemon.log")
        let deadline = ContinuousClock.now + timeout
        while true {
            let printed = process.output
            if printed.hasSuffix("\n"), let line = printed.split(separator: "\n").first,
                FileManager.default.fileExists(atPath: socket)
            {
                return (process, String(line))
            }
            guard process.isRunning else {
                throw HarnessError("\(name) exited (\(process.termination!)): \(process.errorOutput)")
            }
            guard ContinuousClock.now < deadline else { throw HarnessError("\(name) did not start within \(timeout)") }
            // The daemon prints its address to a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// Starts bluez-sim with `arguments` (its stdout in `directory/sim.out`, its log in `errorPath`) and waits for
    /// its `bluez-sim ready` line.
    static func simulator(
        name: String, arguments: [String], directory: String, errorPath: String, timeout: Duration
    ) async throws -> ChildProcess {
        let process = try ChildProcess(
            name: name, executable: Paths.bluezSim, arguments: arguments,
            environment: ProcessInfo.processInfo.environment, outputPath: "\(directory)/sim.out", errorPath: errorPath)
        let deadline = ContinuousClock.now + timeout
        while !process.output.split(separator: "\n").contains("bluez-sim ready") {
            guard process.isRunning else {
                throw HarnessError("\(name) exited (\(process.termination!)):\n\(process.tail())")
            }
            guard ContinuousClock.now < deadline else { throw HarnessError("\(name) not ready within \(timeout)") }
            // Its stdout is a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(10))
        }
        return process
    }
}
