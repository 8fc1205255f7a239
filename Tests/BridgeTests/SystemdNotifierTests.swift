import BridgeBase
import Testing

#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct SystemdNotifierTests {
    static func scratchPath() -> String {
        var template = Array("/tmp/notify-test.XXXXXX".utf8CString)
        let dir = template.withUnsafeMutableBufferPointer { String(cString: mkdtemp($0.baseAddress!)) }
        return dir + "/notify"
    }

    @Test("messages reach a socket given by path")
    func pathSocket() async {
        let listener = NotifyListener(address: Self.scratchPath())
        let notifier = SystemdNotifier(socketPath: listener.address, watchdogTimeout: nil)
        #expect(notifier.send("READY=1"))
        #expect(await listener.receive() == "READY=1")
        #expect(notifier.send("WATCHDOG=1"))
        #expect(await listener.receive() == "WATCHDOG=1")
    }

    @Test("messages reach a socket in the abstract namespace (@name)")
    func abstractSocket() async {
        let listener = NotifyListener(address: "@ble-mqtt-bridge-test-\(getpid())")
        let notifier = SystemdNotifier(socketPath: listener.address, watchdogTimeout: nil)
        #expect(notifier.send("STOPPING=1"))
        #expect(await listener.receive() == "STOPPING=1")
    }

    @Test("nobody listening: send says so and does not block")
    func nobodyListening() {
        let notifier = SystemdNotifier(socketPath: Self.scratchPath(), watchdogTimeout: nil)
        #expect(!notifier.send("READY=1"))
    }

    @Test("the environment: NOTIFY_SOCKET, WATCHDOG_USEC, and WATCHDOG_PID naming another process")
    func environment() {
        defer {
            unsetenv("NOTIFY_SOCKET")
            unsetenv("WATCHDOG_USEC")
            unsetenv("WATCHDOG_PID")
        }
        unsetenv("NOTIFY_SOCKET")
        #expect(SystemdNotifier.fromEnvironment() == nil)
        setenv("NOTIFY_SOCKET", "relative/path", 1)
        #expect(SystemdNotifier.fromEnvironment() == nil, "not a socket address")
        setenv("NOTIFY_SOCKET", "/run/systemd/notify", 1)
        #expect(SystemdNotifier.fromEnvironment()?.socketPath == "/run/systemd/notify")
        #expect(SystemdNotifier.fromEnvironment()?.watchdogTimeout == nil)
        setenv("WATCHDOG_USEC", "30000000", 1)
        #expect(SystemdNotifier.fromEnvironment()?.watchdogTimeout == .seconds(30))
        setenv("WATCHDOG_PID", "\(getpid())", 1)
        #expect(SystemdNotifier.fromEnvironment()?.watchdogTimeout == .seconds(30))
        setenv("WATCHDOG_PID", "\(getpid() + 1)", 1)
        #expect(SystemdNotifier.fromEnvironment()?.watchdogTimeout == nil, "the watchdog is another process's")
        setenv("WATCHDOG_PID", "\(getpid())", 1)
        setenv("WATCHDOG_USEC", "0", 1)
        #expect(SystemdNotifier.fromEnvironment()?.watchdogTimeout == nil)
    }
}
