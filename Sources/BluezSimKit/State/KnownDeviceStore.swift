import BridgeBase
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One device bluetoothd remembers across restarts.
public struct KnownDevice: Sendable, Equatable {
    /// The adapter name (`hci0`).
    public var adapter: String
    /// `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// Paired (bonded).
    public var paired: Bool
    /// The bond's key is authenticated (passkey); Just Works bonds are not.
    public var authenticated: Bool = false
    /// Its services were resolved once (BlueZ lists them in `UUIDs` from then on).
    public var servicesResolved: Bool

    /// Creates an entry.
    public init(adapter: String, address: String, paired: Bool, servicesResolved: Bool) {
        self.adapter = adapter
        self.address = address
        self.paired = paired
        self.servicesResolved = servicesResolved
    }
}

/// The simulator's counterpart of `/var/lib/bluetooth` (`--state-dir`): which devices are known
/// (connected or paired once, not removed since), so a restarted simulator exports them at start.
///
/// The file `DIR/devices` holds one device per line, `<adapter> <address> paired=0|1 resolved=0|1`
/// (and `auth=1` for a bond with an authenticated key),
/// and is replaced atomically (write to a temporary file, rename) on every change.
public struct KnownDeviceStore: Sendable {
    /// The state directory.
    public let directory: String

    /// A store in `directory` (created when missing).
    public init(directory: String) throws(ScenarioError) {
        self.directory = directory
        if mkdir(directory, 0o755) != 0 && errno != EEXIST {
            throw ScenarioError(code: .unreadable, file: directory, message: "cannot create state directory: errno \(errno)")
        }
    }

    /// `DIR/devices`.
    public var path: String { directory + "/devices" }

    /// The stored devices; an absent file is empty, malformed lines are skipped.
    public func load() -> [KnownDevice] {
        guard let text = Self.readFile(path) else { return [] }
        var out: [KnownDevice] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("#") { continue }
            let f = line.split(separator: " ")
            guard f.count >= 2 else { continue }
            var d = KnownDevice(adapter: String(f[0]), address: String(f[1]).uppercased(), paired: false,
                                servicesResolved: false)
            for field in f.dropFirst(2) {
                if field == "paired=1" { d.paired = true }
                if field == "resolved=1" { d.servicesResolved = true }
                if field == "auth=1" { d.authenticated = true }
            }
            out.append(d)
        }
        return out
    }

    /// Replaces the stored devices.
    public func save(_ devices: [KnownDevice]) {
        var text = "# bluez-sim known devices (like /var/lib/bluetooth): <adapter> <address> paired=0|1 resolved=0|1 [auth=1]\n"
        for d in devices {
            text += "\(d.adapter) \(d.address) paired=\(d.paired ? 1 : 0) resolved=\(d.servicesResolved ? 1 : 0)"
                + (d.paired && d.authenticated ? " auth=1\n" : "\n")
        }
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return }
        let failed = writeAll(fd, text) != nil
        close(fd)
        if failed { unlink(tmp) } else { rename(tmp, path) }
    }

    static func readFile(_ path: String) -> String? {
        (try? BridgeBase.readFile(path).get()).map { String(decoding: $0, as: UTF8.self) }
    }
}
