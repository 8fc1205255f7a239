import BridgeCore
import Synchronization

/// Matches answers to the requests and commands the server published, by the `transaction` it added.
///
/// ``open()`` gives a fresh transaction (`web-<process tag>-<n>`) before the request is published;
/// ``wait(for:timeout:)`` returns the answer's payload, or nil after the timeout. Answers come through
/// ``deliver(topic:payload:)``, which every `.../response/...` and `.../result` message goes through.
/// Each request has its own transaction, so concurrent requests each get their own answer.
public final class TransactionWaiters: Sendable {
    struct Slot {
        var answer: String?
        var continuation: CheckedContinuation<String?, Never>?
        var finished = false
    }

    struct State {
        var next = 1
        var slots: [String: Slot] = [:]
    }

    let state = Mutex(State())
    /// `web-<tag>-`: this process's transactions.
    public let prefix: String

    /// Creates the matcher; `tag` tells this process's transactions from another's (default: random).
    public init(tag: String? = nil) {
        var generator = SystemRandomNumberGenerator()
        let random = tag ?? String(UInt32.random(in: 0...UInt32.max, using: &generator), radix: 16)
        self.prefix = "web-\(random)-"
    }

    /// A new transaction, waiting for its answer.
    public func open() -> String {
        state.withLock { state in
            let transaction = prefix + String(state.next)
            state.next += 1
            state.slots[transaction] = Slot()
            return transaction
        }
    }

    /// The number of transactions waiting.
    public var pendingCount: Int { state.withLock { $0.slots.count } }

    /// Whether a message on `topic` may be an answer: a bridge response or a command result.
    public static func mayAnswer(topic: String) -> Bool {
        topic.hasSuffix("/result") || topic.utf8.firstRange(of: "/response/".utf8) != nil
    }

    /// Hands an answer to its waiting request, if its payload is a JSON object whose `transaction` is one of ours.
    /// - Returns: whether a request was waiting for it.
    @discardableResult
    public func deliver(topic: String, payload: String) -> Bool {
        guard Self.mayAnswer(topic: topic), payload.utf8.firstRange(of: prefix.utf8) != nil,
            let value = try? JSONParser.parse(payload), let transaction = value["transaction"]?.stringValue
        else { return false }
        let continuation = state.withLock { state -> CheckedContinuation<String?, Never>?? in
            guard var slot = state.slots[transaction], !slot.finished, slot.answer == nil else { return .none }
            if let continuation = slot.continuation {
                slot.continuation = nil
                slot.finished = true
                state.slots[transaction] = slot
                return .some(continuation)
            }
            slot.answer = payload
            state.slots[transaction] = slot
            return .some(nil)
        }
        guard let continuation else { return false }
        continuation?.resume(returning: payload)
        return true
    }

    /// Waits for the answer to `transaction` at most `timeout`; nil on timeout or cancellation. The transaction
    /// is closed afterwards (a late answer is ignored).
    public func wait(for transaction: String, timeout: Duration) async -> String? {
        defer { _ = state.withLock { $0.slots.removeValue(forKey: transaction) } }
        return await withTaskGroup(of: String?.self) { group in
            group.addTask { await self.take(transaction) }
            group.addTask {
                try? await Task.sleep(for: timeout)
                self.finish(transaction)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
    }

    /// The answer, once there; nil when the transaction is finished without one.
    func take(_ transaction: String) async -> String? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<String?, Never>) in
                let ready: String?? = state.withLock { state in
                    guard var slot = state.slots[transaction], !slot.finished else { return .some(nil) }
                    if let answer = slot.answer {
                        slot.finished = true
                        state.slots[transaction] = slot
                        return .some(answer)
                    }
                    if Task.isCancelled { return .some(nil) }
                    slot.continuation = continuation
                    state.slots[transaction] = slot
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish(transaction)
        }
    }

    /// Forgets `transaction` (its request was never published).
    public func discard(_ transaction: String) {
        finish(transaction)
        _ = state.withLock { $0.slots.removeValue(forKey: transaction) }
    }

    /// Ends the wait for `transaction` without an answer.
    func finish(_ transaction: String) {
        let continuation = state.withLock { state -> CheckedContinuation<String?, Never>? in
            guard var slot = state.slots[transaction], !slot.finished else { return nil }
            slot.finished = true
            defer { slot.continuation = nil; state.slots[transaction] = slot }
            return slot.continuation
        }
        continuation?.resume(returning: nil)
    }
}
