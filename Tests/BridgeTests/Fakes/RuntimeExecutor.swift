import Dispatch
import Glibc
import Synchronization

/// The task executor ``RuntimeHarness`` runs the runtime on: it runs jobs on Dispatch's global
/// pool (as concurrently as the default executor) and counts every job from its enqueue to the
/// end of its run, so that "no job of the runtime is queued or running" can be awaited
/// (``waitUntilIdle(timeout:)``).
///
/// Why that count is exactly "the runtime is idle" (the harness's `advance` relies on it):
/// - Everything the runtime runs is a job of this executor. The runtime's root task is created
///   with this executor as its preference, and task groups' child tasks (sessions, BlueZ calls,
///   `Mailbox.receive(until:clock:)`'s two waits) inherit it; a suspended task that is resumed
///   (a continuation in `Mailbox`, `FakeClock`, `FakeCentral`, an `AsyncStream` consumer such as
///   the supervisor's BlueZ event loop) is enqueued here again, counted before `resume` returns.
/// - A job that wakes another task (a send into a mailbox, a child task started or finished)
///   does so while it runs: the woken job is counted before the waking one is uncounted, so the
///   count cannot pass through zero while work is handed on.
/// - Nothing else wakes the runtime: it has no unstructured task, actor, real clock or thread of
///   its own (`RuntimeIdleInvariantTests` checks its sources), and the fakes answer at once, or
///   when the test releases a call or moves the fake clock. So at zero the runtime stays idle
///   until the test acts, and what the test then sees is everything the runtime will do.
/// - Work that escapes anyway (a future `Task {}`, an actor with an executor of its own) would
///   make "idle" a guess again: `FakeClock.sleep` and every `FakeCentral` call check that they run
///   in one of this executor's jobs (``runsCurrentJob``) and note the escape (``escapes``), which
///   the harness turns into a test failure.
final class RuntimeExecutor: TaskExecutor {
    private struct Waiter {
        var id: Int
        var continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        /// Jobs enqueued and not yet finished running.
        var pending = 0
        /// Jobs ever enqueued.
        var total = 0
        var waiters: [Waiter] = []
        var nextID = 0
        var escapes: [String] = []
    }

    private let state = Mutex(State())

    /// Marks the thread that runs one of this executor's jobs (its value is the executor).
    private static let runningKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0)
        return key
    }()

    init() {}

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        state.withLock { s in
            s.pending += 1
            s.total += 1
        }
        DispatchQueue.global().async {
            let me = Unmanaged.passUnretained(self).toOpaque()
            pthread_setspecific(Self.runningKey, me)
            job.runSynchronously(on: self.asUnownedTaskExecutor())
            pthread_setspecific(Self.runningKey, nil)
            self.finished()
        }
    }

    private func finished() {
        let woken = state.withLock { s -> [Waiter] in
            s.pending -= 1
            guard s.pending == 0 else { return [] }
            defer { s.waiters.removeAll() }
            return s.waiters
        }
        for w in woken { w.continuation.resume(returning: true) }
    }

    /// Jobs queued or running now.
    var pending: Int { state.withLock { $0.pending } }

    /// Jobs run (or queued) since the start: grows whenever the runtime does anything.
    var jobs: Int { state.withLock { $0.total } }

    /// Whether the calling code runs in one of this executor's jobs.
    var runsCurrentJob: Bool {
        pthread_getspecific(Self.runningKey) == UnsafeMutableRawPointer(Unmanaged.passUnretained(self).toOpaque())
    }

    /// Notes that runtime work ran outside this executor (what, for the failure message).
    func noteEscape(_ what: String) {
        state.withLock { $0.escapes.append(what) }
    }

    /// Runtime work seen outside this executor, oldest first.
    var escapes: [String] { state.withLock { $0.escapes } }

    /// Waits until no job is queued or running (at once when none is); false after `timeout` of
    /// real time (a runtime that never settles: a busy loop), or when the waiting task is cancelled.
    ///
    /// The caller must not run on this executor (the test's task does not).
    func waitUntilIdle(timeout: Duration) async -> Bool {
        if state.withLock({ $0.pending == 0 }) { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { await self.idle() }
            group.addTask {
                try? await Task.sleep(for: timeout)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }

    private func idle() async -> Bool {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Bool, Never>) in
                let now: Bool? = state.withLock { s in
                    if s.pending == 0 { return true }
                    if Task.isCancelled { return false }
                    s.waiters.append(Waiter(id: id, continuation: c))
                    return nil
                }
                if let now { c.resume(returning: now) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> Waiter? in
                guard let i = s.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return s.waiters.remove(at: i)
            }
            waiter?.continuation.resume(returning: false)
        }
    }
}
