import BridgeBase
import Logging
import ServiceLifecycle
import Synchronization

/// Checks that the I/O loop still turns, and tells systemd.
///
/// Every `period` it gives the loop a job, unless the job given before has not run yet. The job
/// itself sends `WATCHDOG=1` (with `WatchdogSec=` set; the bridge is restarted when the pings
/// stop) the moment the loop runs it: a ping proves that the loop serves D-Bus and MQTT, and a
/// loop that is only slow (a busy machine) pings late rather than not at all. A job still waiting
/// after two periods (systemd's whole timeout) means the loop is stuck: an error is logged once,
/// the loop is woken by force each period until it turns again, and as the pings stop meanwhile,
/// a loop that stays stuck ends in a restart under systemd.
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
        let notifier = notifier
        var given: Int64?
        var stalledSince: Int64?
        while !Task.isCancelled {
            let now = PollLoop.nowMs()
            if let given, lastRun.load(ordering: .acquiring) < given {
                // Not run yet: slow, or stuck once it has waited two periods (systemd's timeout).
                if stalledSince == nil, now - given >= 2 * period.inMilliseconds {
                    stalledSince = given
                    logger.error(
                        "the I/O loop has not run a job given \(now - given) ms ago: D-Bus and MQTT wait; waking it")
                }
                loop.forceWake()
            } else {
                if let since = stalledSince {
                    logger.notice("the I/O loop turns again after \(lastRun.load(ordering: .acquiring) - since) ms")
                    stalledSince = nil
                }
                given = now
                loop.execute {
                    lastRun.store(PollLoop.nowMs(), ordering: .releasing)
                    notifier?.send("WATCHDOG=1")
                }
            }
            try? await Task.sleep(for: period)
        }
    }
}
