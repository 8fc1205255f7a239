import Synchronization

/// One live page's frames waiting to be written: bounded, never blocks the producer.
///
/// The producer (the MQTT consumer) ``push(_:)``es frames; the page's response ``next()`` takes every frame
/// waiting at once (one write for a burst). A queue that overflows is closed: a page too slow to keep up is
/// dropped (it reconnects and loads a fresh snapshot) rather than holding memory or slowing the others.
public final class EventQueue: Sendable {
    /// The default bound: 4096 frames.
    public static let defaultCapacity = 4096

    /// The most frames waiting.
    public let capacity: Int

    struct State {
        var frames: [[UInt8]] = []
        var waiter: CheckedContinuation<[[UInt8]]?, Never>?
        var closed = false
    }

    let state = Mutex(State())

    /// Creates an open, empty queue.
    public init(capacity: Int = EventQueue.defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    /// Queues a frame. Returns false when the queue is closed, or overflowed and is now closed.
    @discardableResult
    public func push(_ frame: [UInt8]) -> Bool {
        let (accepted, resume) = state.withLock { state -> (Bool, CheckedContinuation<[[UInt8]]?, Never>?) in
            guard !state.closed else { return (false, nil) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (true, waiter)
            }
            if state.frames.count >= capacity {
                state.closed = true
                state.frames = []
                return (false, nil)
            }
            state.frames.append(frame)
            return (true, nil)
        }
        resume?.resume(returning: [frame])
        return accepted
    }

    /// Closes the queue: ``next()`` returns what is left, then nil.
    public func close() {
        let waiter = state.withLock { state in
            state.closed = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// Whether the queue is closed.
    public var isClosed: Bool { state.withLock { $0.closed } }

    /// Waits for frames and takes all of them; nil once the queue is closed and empty, or the task is cancelled.
    public func next() async -> [[UInt8]]? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[[UInt8]]?, Never>) in
                let ready: [[UInt8]]?? = state.withLock { state in
                    if !state.frames.isEmpty {
                        defer { state.frames = [] }
                        return .some(state.frames)
                    }
                    if state.closed || Task.isCancelled { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            close()
        }
    }
}
