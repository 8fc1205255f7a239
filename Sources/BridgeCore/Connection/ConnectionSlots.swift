/// The connection slots of `bluetooth.max_connections` (SPEC §6), as a pure value: at most
/// `capacity` holders; the others wait and get a slot in arrival order.
public struct ConnectionSlots<ID: Hashable & Sendable>: Sendable {
    /// The most holders at once.
    public let capacity: Int
    /// Who holds a slot.
    public private(set) var holders: Set<ID> = []
    /// Who waits, in arrival order.
    public private(set) var waiting: [ID] = []

    /// Slots for at most `capacity` holders (at least one).
    public init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Asks for a slot: true when granted now (or already held); otherwise queued in arrival
    /// order (asking again keeps the place).
    public mutating func request(_ id: ID) -> Bool {
        if holders.contains(id) { return true }
        if waiting.contains(id) { return false }
        if holders.count < capacity && waiting.isEmpty {
            holders.insert(id)
            return true
        }
        waiting.append(id)
        return false
    }

    /// Gives back a slot or leaves the queue; returns the ids that got a slot as a result, in
    /// grant order. Unknown ids change nothing.
    public mutating func release(_ id: ID) -> [ID] {
        if let i = waiting.firstIndex(of: id) {
            waiting.remove(at: i)
            return []
        }
        guard holders.remove(id) != nil else { return [] }
        var granted: [ID] = []
        while holders.count < capacity, !waiting.isEmpty {
            let next = waiting.removeFirst()
            holders.insert(next)
            granted.append(next)
        }
        return granted
    }

    /// Whether `id` holds a slot.
    public func holds(_ id: ID) -> Bool { holders.contains(id) }
}
