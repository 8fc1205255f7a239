import BridgeBase
import Synchronization

/// A loop's inbox: many senders, one receiver, in send order, unbounded.
///
/// The receiver waits for the next input or a deadline (``receive(until:clock:)``): timers are
/// deadlines the loop computes and waits on, not tasks that fire later.
public final class Mailbox<Input: Sendable>: Sendable {
    /// What ``receive(until:clock:)`` returns.
    public enum Received: Sendable {
        case input(Input)
        /// The deadline passed first.
        case deadline
        /// ``finish()`` was called and everything sent before was received, or the task was cancelled.
        case finished
    }

    private struct State {
        var queue: [Input] = []
        var head = 0
        var waiter: CheckedContinuation<Input?, Never>?
        var finished = false

        mutating func take() -> Input? {
            guard head < queue.count else { return nil }
            let input = queue[head]
            head += 1
            if head > 64 && head * 2 > queue.count {
                queue.removeFirst(head)
                head = 0
            }
            return input
        }
    }

    private let state = Mutex(State())

    /// Creates an empty mailbox.
    public init() {}

    /// Sends an input; false (and dropped) when the mailbox is finished.
    @discardableResult
    public func send(_ input: Input) -> Bool {
        let waiter: CheckedContinuation<Input?, Never>? = state.withLock { s in
            if s.finished { return nil }
            if let w = s.waiter {
                s.waiter = nil
                return w
            }
            s.queue.append(input)
            return nil
        }
        guard let waiter else { return !state.withLock { $0.finished } }
        waiter.resume(returning: input)
        return true
    }

    /// Ends the mailbox: later sends are dropped; the receiver gets what is queued, then `.finished`.
    public func finish() {
        let waiter = state.withLock { s -> CheckedContinuation<Input?, Never>? in
            s.finished = true
            defer { s.waiter = nil }
            return s.head < s.queue.count ? nil : s.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// How many inputs wait.
    public var count: Int { state.withLock { $0.queue.count - $0.head } }

    /// Whether the receiver is parked: suspended in a receive with nothing queued, so that only a
    /// send (or ``finish()``, or cancellation) wakes it. Tests read it to see that a loop is idle;
    /// the send and receive paths do not touch anything for it.
    public var isReceiverParked: Bool { state.withLock { $0.waiter != nil } }

    /// The next input, or nil when finished or the task is cancelled.
    public func receive() async -> Input? {
        if let input = state.withLock({ $0.take() }) { return input }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (c: CheckedContinuation<Input?, Never>) in
                let resume: Input?? = state.withLock { s in
                    if let input = s.take() { return .some(input) }
                    if s.finished || Task.isCancelled { return .some(nil) }
                    s.waiter = c
                    return nil
                }
                if let resume { c.resume(returning: resume) }
            }
        } onCancel: {
            let waiter = state.withLock { s -> CheckedContinuation<Input?, Never>? in
                defer { s.waiter = nil }
                return s.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    /// Puts an input back in front (one the receiver took but did not handle).
    private func pushFront(_ input: Input) {
        state.withLock { s in
            if s.head > 0 {
                s.head -= 1
                s.queue[s.head] = input
            } else {
                s.queue.insert(input, at: 0)
            }
        }
    }

    /// The next input, or `.deadline` once `deadline` passes (never with a nil deadline).
    public func receive(until deadline: BridgeInstant?, clock: any BridgeClock) async -> Received {
        if let input = state.withLock({ $0.take() }) { return .input(input) }
        guard let deadline else {
            return await receive().map { .input($0) } ?? .finished
        }
        if clock.now >= deadline { return .deadline }
        return await withTaskGroup(of: Received?.self) { group in
            group.addTask { await self.receive().map { .input($0) } }
            group.addTask {
                do { try await clock.sleep(until: deadline) } catch { return nil }
                return .deadline
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            var result = first
            for await other in group {
                // Both finished: keep an input, never lose one.
                guard case .input(let input)? = other else { continue }
                if case .input? = result { pushFront(input) } else { result = .input(input) }
            }
            if let result { return result }
            return state.withLock { $0.finished } || Task.isCancelled ? .finished : .deadline
        }
    }
}
