import Foundation

/// A private dbus-daemon for one test (shared by the test targets that need a bus).
public final class TestBus: @unchecked Sendable {
    /// The daemon.
    public let process = Process()
    let dir: URL
    /// The bus's address.
    public let address: String

    /// Starts the daemon; returns once it listens.
    public init() throws {
        dir = FileManager.default.temporaryDirectory.appendingPathComponent("dbuskit-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let socket = dir.appendingPathComponent("bus").path
        let config = dir.appendingPathComponent("bus.conf")
        try """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socket)</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_type="method_call"/>
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
          </policy>
        </busconfig>
        """.write(to: config, atomically: true, encoding: .utf8)
        process.executableURL = URL(fileURLWithPath: "/usr/bin/dbus-daemon")
        process.arguments = ["--config-file=\(config.path)", "--nofork", "--print-address"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        // The daemon prints its address once it listens.
        let line = out.fileHandleForReading.availableLine()
        address = line.isEmpty ? "unix:path=\(socket)" : line
    }

    deinit {
        // Process.waitUntilExit spins on a concurrency thread, and the child may have SIGTERM blocked
        // (inherited from a Dispatch thread): SIGKILL it and let it go.
        kill(process.processIdentifier, SIGKILL)
        try? FileManager.default.removeItem(at: dir)
    }
}

extension FileHandle {
    /// Reads up to the first newline.
    func availableLine() -> String {
        var data = Data()
        while true {
            let chunk = readData(ofLength: 1)
            if chunk.isEmpty || chunk == Data([0x0a]) { break }
            data.append(chunk)
        }
        return String(decoding: data, as: UTF8.self)
    }
}
