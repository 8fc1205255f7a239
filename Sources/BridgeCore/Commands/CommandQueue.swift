/// A bounded first-in, first-out queue of one device's pending commands, as a pure value.
///
/// Commands to one device run one at a time in arrival order (BlueZ answers
/// `InProgress` to overlapping operations), so the runtime queues them here.
/// Each entry has a deadline (arrival + `commands.timeout`); entries still
/// queued at their deadline are taken out by ``removeExpired(now:)`` and
/// answered with `not_connected` (or `timeout`). A full queue refuses new
/// entries with ``EnqueueResult/overflow``, answered with `busy`: nothing is
/// dropped silently. Time is any `InstantProtocol`, as in ``DeviceConnectionStateMachine``.
public struct CommandQueue<Element, Instant: InstantProtocol> {
    /// A queued element and its deadline.
    public struct Entry {
        /// The queued element.
        public var element: Element
        /// When the element expires.
        public var deadline: Instant

        /// Creates an entry.
        public init(element: Element, deadline: Instant) {
            self.element = element
            self.deadline = deadline
        }
    }

    /// The outcome of ``enqueue(_:deadline:)``.
    public enum EnqueueResult: Sendable, Hashable {
        /// The element was queued.
        case accepted
        /// The queue already held ``capacity`` elements; the element was not queued.
        case overflow
    }

    /// The most elements the queue holds.
    public let capacity: Int
    /// Entries in arrival order from `head` on; the slots before `head` are spent.
    var storage: [Entry] = []
    var head = 0

    /// Creates an empty queue that holds at most `capacity` elements (at least one).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The number of queued elements.
    public var count: Int { storage.count - head }

    /// Whether the queue is empty.
    public var isEmpty: Bool { head == storage.count }

    /// The oldest entry, without removing it.
    public var first: Entry? { isEmpty ? nil : storage[head] }

    /// The queued entries, oldest first.
    public var entries: ArraySlice<Entry> { storage[head...] }

    /// The earliest deadline of all queued entries (the time to call ``removeExpired(now:)``).
    public var nextDeadline: Instant? { storage[head...].lazy.map(\.deadline).min() }

    /// Appends `element`, unless the queue is full.
    public mutating func enqueue(_ element: Element, deadline: Instant) -> EnqueueResult {
        guard count < capacity else { return .overflow }
        storage.append(Entry(element: element, deadline: deadline))
        return .accepted
    }

    /// Removes and returns the oldest entry.
    public mutating func dequeue() -> Entry? {
        guard head < storage.count else { return nil }
        let entry = storage[head]
        head += 1
        compact()
        return entry
    }

    /// Removes and returns, oldest first, every entry whose deadline is at or before `now`.
    public mutating func removeExpired(now: Instant) -> [Entry] {
        var expired: [Entry] = []
        var kept: [Entry] = []
        for entry in storage[head...] {
            if entry.deadline <= now {
                expired.append(entry)
            } else {
                kept.append(entry)
            }
        }
        guard !expired.isEmpty else { return [] }
        storage = kept
        head = 0
        return expired
    }

    /// Removes and returns every entry, oldest first (for a device that is forgotten or a bridge that stops).
    public mutating func removeAll() -> [Entry] {
        let all = Array(storage[head...])
        storage.removeAll(keepingCapacity: true)
        head = 0
        return all
    }

    /// Drops spent slots once they are at least half the storage.
    mutating func compact() {
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        } else if head >= 16, head * 2 >= storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }
}

extension CommandQueue: Sendable where Element: Sendable {}
extension CommandQueue.Entry: Sendable where Element: Sendable {}
extension CommandQueue.Entry: Equatable where Element: Equatable {}
extension CommandQueue.Entry: Hashable where Element: Hashable {}
