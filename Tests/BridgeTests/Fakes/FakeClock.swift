import BridgeBase
import Synchronization

@testable import Bridge

/// A clock that moves only when a test advances it; its wall clock moves with it (from
/// ``wallOrigin`` at its start).
///
/// Its sleepers are the runtime's parked timers: ``nextDeadline`` is the earliest, which
/// `RuntimeHarness.advance` moves to, one due deadline after the other, letting the runtime
/// settle at each (as `NIOAsyncTestingEventLoop.advanceTime` runs due work in order).
final class FakeClock: BridgeClock {
    private struct Sleeper {
        var deadline: BridgeInstant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = BridgeInstant(offset: .seconds(1000))
        var sleepers: [Int: Sleeper] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())
    /// When set, every ``sleep(until:)`` must run in one of its jobs (else the escape is noted).
    let executor: RuntimeExecutor?

    /// A clock at 1000 s; `executor`: the runtime's, whose idle count must see every sleeper.
    init(executor: RuntimeExecutor? = nil) {
        self.executor = executor
    }

    var now: BridgeInstant { state.withLock { $0.now } }

    /// The wall clock (seconds since 1970) when ``now`` was 1000 s: 2026-01-01 00:00:00 UTC.
    static let wallOrigin: Int64 = 1_767_225_600

    /// Whole seconds since 1970 on the fake wall clock: it moves with ``now``.
    var unixTime: Int64 { Self.wallOrigin + now.offset.components.seconds - 1000 }

    /// Tasks sleeping now (parked timers).
    var sleeperCount: Int { state.withLock { $0.sleepers.count } }

    /// The earliest deadline a task sleeps until (always later than ``now``).
    var nextDeadline: BridgeInstant? { state.withLock { $0.sleepers.values.map(\.deadline).min() } }

    func sleep(until deadline: BridgeInstant) async throws {
        if let executor, !executor.runsCurrentJob { executor.noteEscape("FakeClock.sleep(until: \(deadline))") }
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
                let resume: Result<Void, any Error>? = state.withLock { s in
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if deadline <= s.now { return .success(()) }
                    s.sleepers[id] = Sleeper(deadline: deadline, continuation: c)
                    return nil
                }
                if let resume { c.resume(with: resume) }
            }
        } onCancel: {
            let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time on by `duration` and wakes every sleeper that is due (at once: use
    /// `RuntimeHarness.advance` to let the runtime run at each deadline on the way).
    func advance(by duration: Duration) {
        advance(to: now.advanced(by: duration))
    }

    /// Moves time on to `instant` (never back) and wakes every sleeper that is due.
    func advance(to instant: BridgeInstant) {
        let due: [Sleeper] = state.withLock { s in
            s.now = max(s.now, instant)
            let now = s.now
            let ids = s.sleepers.filter { $0.value.deadline <= now }.map(\.key)
            return ids.compactMap { s.sleepers.removeValue(forKey: $0) }
        }
        for sleeper in due { sleeper.continuation.resume() }
    }
}
