import Foundation

/// Where the tests find the package, the built executables and the system tools.
enum Paths {
    /// The package root (this file is `Tests/IntegrationTests/Harness/Paths.swift`).
    static let root: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The directory holding `ble-mqtt-bridge` and `bluez-sim`: `$INTEGRATION_BIN_DIR`, else the
    /// directory of the running test bundle (same build, any `--scratch-path`), else `.build/debug`.
    static let binDirectory: String = {
        let environment = ProcessInfo.processInfo.environment
        if let directory = environment["INTEGRATION_BIN_DIR"], !directory.isEmpty { return directory }
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            let directory = (executable as NSString).deletingLastPathComponent
            if FileManager.default.isExecutableFile(atPath: "\(directory)/ble-mqtt-bridge") { return directory }
        }
        return "\(root)/.build/debug"
    }()

    /// The bridge executable.
    static var bridge: String { "\(binDirectory)/ble-mqtt-bridge" }
    /// The BlueZ simulator.
    static var bluezSim: String { "\(binDirectory)/bluez-sim" }
    /// The demo scenario of the simulator.
    static var demoScenario: String { "\(root)/scripts/sim/demo.yaml" }
    /// The private bus configuration.
    static var busConfig: String { "\(root)/scripts/sim/dbus.conf" }
    /// The demo's bridge configuration.
    static var demoConfig: String { "\(root)/bridge.yaml" }

    static let dbusDaemon = tool("dbus-daemon")
    static let mosquitto = tool("mosquitto")
    static let mosquittoSub = tool("mosquitto_sub")
    static let mosquittoPub = tool("mosquitto_pub")
    static let mosquittoPasswd = tool("mosquitto_passwd")

    /// A system tool in the usual directories (`/usr/sbin` is not on every PATH).
    static func tool(_ name: String) -> String {
        for directory in ["/usr/bin", "/usr/sbin", "/bin", "/sbin", "/usr/local/bin", "/usr/local/sbin"] {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        return "/usr/bin/\(name)"
    }

    /// Fails with a hint when the executables under test were not built.
    static func requireBuiltExecutables() throws {
        for path in [bridge, bluezSim] where !FileManager.default.isExecutableFile(atPath: path) {
            throw HarnessError("no executable at \(path): run `swift build` first (or set INTEGRATION_BIN_DIR)")
        }
    }
}
