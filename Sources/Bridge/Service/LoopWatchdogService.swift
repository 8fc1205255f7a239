import BridgeBase
import Logging
import ServiceLifecycle
import Synchronization

/// Checks that the I/O loop still turns, and tells systemd.
///
/// Every `period` it gives the loop a job that notes the time, and looks whether the job given
/// the period before has run. If it has, the loop serves D-Bus and MQTT and systemd gets
/// `WATCHDOG=1` (with `WatchdogSec=` set; the bridge is restarted when the pings stop). If not,
/// it logs an error once, and wakes the loop by force each period until it turns again; the pings
/// stop meanwhile, so a loop that stays stuck ends in a restart under systemd.
///
/// It also sends `READY=1` when the bridge has started (`Type=notify`) and `STOPPING=1` when
/// a graceful shutdown begins. Without `NOTIFY_SOCKET` only the self-check runs.
struct LoopWatchdogService: Service {
    let loop: PollLoop
    let notifier: SystemdNotifier?
    let logger: Logger
    /// How often the loop is checked: half the systemd watchdog's timeout, at most 10 s.
    let period: Duration

    init(loop: PollLoop, notifier: SystemdNotifier?, logger: Logger, period: Duration? = nil) {
        self.loop = loop
        self.notifier = notifier
        self.logger = logger
        let fromSystemd = notifier?.watchdogTimeout.map { $0 / 2 }
        self.period = period ?? min(fromSystemd ?? .seconds(10), .seconds(10))
    }

    func run() async throws {
        notifier?.send("READY=1")
        if let timeout = notifier?.watchdogTimeout {
            logger.info("systemd watchdog: \(timeout), the I/O loop checked every \(period)")
        }
        await cancelWhenGracefulShutdown {
            await watch()
        }
        notifier?.send("STOPPING=1")
    }

    private func watch() async {
        let lastRun = Atomic<Int64>(-1)
        var given: Int64?
        var stalledSince: Int64?
        while !Task.isCancelled {
            let now = PollLoop.nowMs()
            if let given, lastRun.load(ordering: .acquiring) < given {
                if stalledSince == nil {
                    stalledSince = given
                    logger.error(
                        "the I/O loop has not run a job given \(now - given) ms ago: D-Bus and MQTT wait; waking it")
                }
                loop.forceWake()
            } else {
                if let since = stalledSince {
                    logger.notice("the I/O loop turns again after \(now - since) ms")
                    stalledSince = nil
                }
                notifier?.send("WATCHDOG=1")
                given = now
                loop.execute { lastRun.store(PollLoop.nowMs(), ordering: .releasing) }
            }
            try? await Task.sleep(for: period)
        }
    }
}
