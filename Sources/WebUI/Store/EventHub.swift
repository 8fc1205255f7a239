import BridgeCore
import Synchronization

/// Fans the page topics' messages out to the live pages (`GET /api/events`) as Server-Sent Events.
///
/// A message is framed once (``frame(topic:payload:)``) and the same bytes go to every page's
/// ``EventQueue``; a page whose queue overflows is dropped. Nothing here waits.
public final class EventHub: Sendable {
    /// The comment line sent to every page every 15 s (keeps proxies and the browser from timing out).
    public static let heartbeatFrame = Array(": keepalive\n\n".utf8)
    /// What a page receives first: a comment, so the response starts at once.
    public static let openingFrame = Array(": live\n\n".utf8)

    struct State {
        var queues: [Int: EventQueue] = [:]
        var nextID = 0
        var dropped = 0
        var closed = false
    }

    let state = Mutex(State())
    /// The bound of each page's queue.
    public let queueCapacity: Int

    /// Creates a hub with no page.
    public init(queueCapacity: Int = EventQueue.defaultCapacity) {
        self.queueCapacity = queueCapacity
    }

    /// `data: {"topic":"...","payload":"..."}` and a blank line.
    public static func frame(topic: String, payload: String) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(topic.utf8.count + payload.utf8.count + 40)
        bytes.append(contentsOf: "data: {\"topic\":".utf8)
        JSONWriter.appendString(topic, to: &bytes)
        bytes.append(contentsOf: ",\"payload\":".utf8)
        JSONWriter.appendString(payload, to: &bytes)
        bytes.append(contentsOf: "}\n\n".utf8)
        return bytes
    }

    /// A new page: its id (for ``unsubscribe(_:)``) and its queue; nil once the hub is closed.
    public func subscribe() -> (id: Int, queue: EventQueue)? {
        state.withLock { state in
            guard !state.closed else { return nil }
            let queue = EventQueue(capacity: queueCapacity)
            let id = state.nextID
            state.nextID += 1
            state.queues[id] = queue
            return (id, queue)
        }
    }

    /// Forgets a page and closes its queue.
    public func unsubscribe(_ id: Int) {
        let queue = state.withLock { $0.queues.removeValue(forKey: id) }
        queue?.close()
    }

    /// Sends a message to every page.
    public func publish(topic: String, payload: String) {
        send(Self.frame(topic: topic, payload: payload))
    }

    /// Sends the heartbeat comment to every page.
    public func heartbeat() {
        send(Self.heartbeatFrame)
    }

    /// Sends raw frame bytes to every page, dropping the pages that cannot keep up.
    public func send(_ frame: [UInt8]) {
        let queues = state.withLock { Array($0.queues) }
        var overflowed: [Int] = []
        for (id, queue) in queues where !queue.push(frame) {
            overflowed.append(id)
        }
        guard !overflowed.isEmpty else { return }
        state.withLock { state in
            for id in overflowed where state.queues.removeValue(forKey: id) != nil {
                state.dropped += 1
            }
        }
    }

    /// The number of live pages.
    public var subscriberCount: Int { state.withLock { $0.queues.count } }

    /// The number of pages dropped for being too slow.
    public var droppedSubscribers: Int { state.withLock { $0.dropped } }

    /// Ends every page's stream and refuses new ones (on shutdown).
    public func close() {
        let queues = state.withLock { state in
            state.closed = true
            defer { state.queues = [:] }
            return Array(state.queues.values)
        }
        for queue in queues { queue.close() }
    }
}
