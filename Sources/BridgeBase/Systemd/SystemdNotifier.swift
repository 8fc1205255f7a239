#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The service manager's notification socket, as `sd_notify(3)` describes it, without
/// libsystemd: one datagram per message to the `AF_UNIX` socket named by `NOTIFY_SOCKET` (a path,
/// or `@name` in the abstract namespace).
///
/// With `Type=notify` systemd counts the service as started at `READY=1`; with `WatchdogSec=`
/// it restarts the service when `WATCHDOG=1` does not come within that time (`WATCHDOG_USEC`).
public struct SystemdNotifier: Sendable {
    /// The socket's address as given (`/run/systemd/notify`, `@abstract`).
    public let socketPath: String
    /// How often the manager wants `WATCHDOG=1` at the latest (`WATCHDOG_USEC`), when it asked
    /// this process for it (`WATCHDOG_PID` unset or this process).
    public let watchdogTimeout: Duration?

    /// Creates a notifier for an explicit socket (tests).
    public init(socketPath: String, watchdogTimeout: Duration?) {
        self.socketPath = socketPath
        self.watchdogTimeout = watchdogTimeout
    }

    /// The notifier the environment describes, or `nil` when not run by a service manager that
    /// listens (no `NOTIFY_SOCKET`, or one that cannot be a socket address).
    public static func fromEnvironment() -> SystemdNotifier? {
        guard let raw = getenv("NOTIFY_SOCKET") else { return nil }
        let path = String(cString: raw)
        guard path.hasPrefix("/") || path.hasPrefix("@"), path.utf8.count < 108 else { return nil }
        var timeout: Duration?
        if let usec = getenv("WATCHDOG_USEC").flatMap({ UInt64(String(cString: $0)) }), usec > 0 {
            let pid = getenv("WATCHDOG_PID").flatMap { Int32(String(cString: $0)) }
            if pid == nil || pid == getpid() { timeout = .microseconds(Int64(clamping: usec)) }
        }
        return SystemdNotifier(socketPath: path, watchdogTimeout: timeout)
    }

    /// Sends `message` (`READY=1`, `WATCHDOG=1`, `STOPPING=1`, `STATUS=...`; several separated by
    /// newlines). Returns whether the datagram went out; never blocks.
    @discardableResult
    public func send(_ message: String) -> Bool {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var name = Array(socketPath.utf8)
        if name.first == UInt8(ascii: "@") { name[0] = 0 }  // the abstract namespace
        let length = withUnsafeMutableBytes(of: &address.sun_path) { path -> Int in
            let count = min(name.count, path.count - 1)
            for i in 0..<count { path[i] = name[i] }
            return count
        }
        let size = socklen_t(MemoryLayout<sa_family_t>.size + length + (name.first == 0 ? 0 : 1))
        var bytes = Array(message.utf8)
        let sent = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa in
                sendto(fd, &bytes, bytes.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL), sa, size)
            }
        }
        return sent == bytes.count
    }
}
