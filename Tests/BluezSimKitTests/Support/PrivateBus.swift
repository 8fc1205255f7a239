import Foundation

/// A private dbus-daemon for one test, with the repository's bus configuration
/// (`scripts/sim/dbus.conf`, what `scripts/sim/start-bus` runs) on a socket in a temporary directory.
final class PrivateBus: @unchecked Sendable {
    let process = Process()
    let dir: URL
    let address: String

    static let config: String = {
        let root = #filePath.split(separator: "/").dropLast(4).joined(separator: "/")
        return "/" + root + "/scripts/sim/dbus.conf"
    }()

    init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluezsim-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let socket = dir.appendingPathComponent("bus").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(Self.config)", "--address=unix:path=\(socket)", "--nofork", "--print-address"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        // The daemon prints its address once it listens.
        var line = Data()
        while true {
            let chunk = out.fileHandleForReading.readData(ofLength: 1)
            if chunk.isEmpty || chunk == Data([0x0a]) { break }
            line.append(chunk)
        }
        let printed = String(decoding: line, as: UTF8.self)
        address = printed.isEmpty ? "unix:path=\(socket)" : printed
    }

    deinit {
        // SIGKILL: the child may have SIGTERM blocked (inherited from a Dispatch thread).
        kill(process.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: dir)
    }
}
