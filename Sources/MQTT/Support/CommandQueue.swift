import Synchronization

/// The commands other threads give a session, for its poll loop to run in order.
///
/// The loop swaps the whole array for an empty one with the same capacity, so once both buffers
/// have grown, appending and taking allocate nothing.
final class CommandQueue: Sendable {
    private let commands: Mutex<[SessionCommand]>
    private let pending = Atomic<Bool>(false)

    init(capacity: Int = 64) {
        var commands: [SessionCommand] = []
        commands.reserveCapacity(capacity)
        self.commands = Mutex(commands)
    }

    /// Whether commands wait (a cheap check before taking the lock).
    var hasPending: Bool { pending.load(ordering: .acquiring) }

    /// Queues `command` (any thread).
    func append(_ command: SessionCommand) {
        commands.withLock { queue in
            queue.append(command)
            pending.store(true, ordering: .releasing)
        }
    }

    /// Moves every queued command into `batch` (which must be empty) and leaves `batch`'s old
    /// buffer in the queue.
    func takeAll(into batch: inout [SessionCommand]) {
        commands.withLock { queue in
            swap(&queue, &batch)
            pending.store(false, ordering: .releasing)
        }
    }
}
