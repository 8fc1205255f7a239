import Testing

@testable import BridgeCore

/// A fake clock instant for the command queue (seconds since an arbitrary start).
private struct QueueInstant: InstantProtocol {
    var offset: Duration

    static func at(_ seconds: Int) -> QueueInstant { QueueInstant(offset: .seconds(seconds)) }
    func advanced(by duration: Duration) -> QueueInstant { QueueInstant(offset: offset + duration) }
    func duration(to other: QueueInstant) -> Duration { other.offset - offset }
    static func < (lhs: QueueInstant, rhs: QueueInstant) -> Bool { lhs.offset < rhs.offset }
}

/// The bounded per-device command queue.
@Suite struct CommandQueueTests {
    private typealias Queue = CommandQueue<Int, QueueInstant>

    private func t(_ seconds: Int) -> QueueInstant { .at(seconds) }

    @Test func fifoOrder() {
        var queue = Queue(capacity: 4)
        #expect(queue.isEmpty)
        #expect(queue.dequeue() == nil)
        for value in 1...3 { #expect(queue.enqueue(value, deadline: t(10)) == .accepted) }
        #expect(queue.count == 3)
        #expect(queue.first?.element == 1)
        #expect(queue.dequeue()?.element == 1)
        #expect(queue.enqueue(4, deadline: t(10)) == .accepted)
        #expect(queue.entries.map(\.element) == [2, 3, 4])
        #expect(queue.dequeue()?.element == 2)
        #expect(queue.dequeue()?.element == 3)
        #expect(queue.dequeue()?.element == 4)
        #expect(queue.dequeue() == nil)
        #expect(queue.isEmpty)
    }

    @Test func overflow() {
        var queue = Queue(capacity: 3)
        for value in 1...3 { #expect(queue.enqueue(value, deadline: t(10)) == .accepted) }
        #expect(queue.enqueue(4, deadline: t(10)) == .overflow)
        #expect(queue.enqueue(5, deadline: t(10)) == .overflow)
        #expect(queue.count == 3)
        #expect(queue.entries.map(\.element) == [1, 2, 3])
        _ = queue.dequeue()
        #expect(queue.enqueue(6, deadline: t(10)) == .accepted)
        #expect(queue.enqueue(7, deadline: t(10)) == .overflow)
        #expect(queue.entries.map(\.element) == [2, 3, 6])
        #expect(Queue(capacity: 0).capacity == 1)
    }

    @Test func expiry() {
        var queue = Queue(capacity: 10)
        _ = queue.enqueue(1, deadline: t(5))
        _ = queue.enqueue(2, deadline: t(8))
        _ = queue.enqueue(3, deadline: t(3))  // a shorter timeout: expires before the ones ahead of it
        _ = queue.enqueue(4, deadline: t(20))
        #expect(queue.nextDeadline == t(3))
        #expect(queue.removeExpired(now: t(2)).isEmpty)
        #expect(queue.count == 4)
        #expect(queue.removeExpired(now: t(5)).map(\.element) == [1, 3])  // deadline reached counts as expired
        #expect(queue.entries.map(\.element) == [2, 4])
        #expect(queue.nextDeadline == t(8))
        let late = queue.removeExpired(now: t(100))
        #expect(late.map(\.element) == [2, 4])
        #expect(late.map(\.deadline) == [t(8), t(20)])
        #expect(queue.isEmpty)
        #expect(queue.nextDeadline == nil)
        // Freed room is usable again.
        for value in 1...10 { #expect(queue.enqueue(value, deadline: t(200)) == .accepted) }
        #expect(queue.enqueue(11, deadline: t(200)) == .overflow)
    }

    @Test func removeAll() {
        var queue = Queue(capacity: 5)
        for value in 1...4 { _ = queue.enqueue(value, deadline: t(value)) }
        _ = queue.dequeue()
        #expect(queue.removeAll().map(\.element) == [2, 3, 4])
        #expect(queue.isEmpty)
        #expect(queue.removeAll().isEmpty)
    }

    /// A long run of mixed operations against a plain array model.
    @Test func matchesModel() {
        var random = SplitMix64(seed: 7)
        var queue = Queue(capacity: 8)
        var model: [(Int, Int)] = []
        var now = 0
        for step in 0..<20_000 {
            switch random.next() % 4 {
            case 0, 1:
                let deadline = now + Int(random.next() % 20)
                let result = queue.enqueue(step, deadline: t(deadline))
                if model.count < 8 {
                    #expect(result == .accepted)
                    model.append((step, deadline))
                } else {
                    #expect(result == .overflow)
                }
            case 2:
                let entry = queue.dequeue()
                #expect(entry?.element == model.first?.0)
                if !model.isEmpty { model.removeFirst() }
            default:
                now += Int(random.next() % 5)
                let expired = queue.removeExpired(now: t(now)).map(\.element)
                #expect(expired == model.filter { $0.1 <= now }.map(\.0))
                model.removeAll { $0.1 <= now }
            }
            #expect(queue.count == model.count)
        }
        #expect(queue.entries.map(\.element) == model.map(\.0))
    }
}
