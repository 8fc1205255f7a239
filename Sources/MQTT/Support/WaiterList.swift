import Synchronization

/// Tasks suspended until a condition holds, resumed together by ``resumeAll()``.
///
/// The condition is re-checked under the list's lock when a task registers, so a signal is never
/// lost as long as the signaller makes the condition true *before* calling ``resumeAll()``.
/// A waiting task that is cancelled returns early.
final class WaiterList: Sendable {
    private struct State {
        var nextID: UInt64 = 0
        var waiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    init() {}

    /// Returns once `ready()` is true (checked now and after every ``resumeAll()``), or when the
    /// task is cancelled.
    func wait(until ready: () -> Bool) async {
        while !Task.isCancelled {
            let id = state.withLock { state in
                state.nextID += 1
                return state.nextID
            }
            var satisfied = false
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let resumeNow = state.withLock { state in
                        if ready() {
                            satisfied = true
                            return true
                        }
                        if Task.isCancelled {
                            return true
                        }
                        state.waiters[id] = continuation
                        return false
                    }
                    if resumeNow {
                        continuation.resume()
                    }
                }
            } onCancel: {
                let continuation = state.withLock { $0.waiters.removeValue(forKey: id) }
                continuation?.resume()
            }
            if satisfied {
                return
            }
        }
    }

    /// Resumes every waiting task; each re-checks its condition.
    func resumeAll() {
        let waiters = state.withLock { state in
            let waiters = state.waiters
            state.waiters.removeAll(keepingCapacity: true)
            return waiters
        }
        for continuation in waiters.values {
            continuation.resume()
        }
    }
}
