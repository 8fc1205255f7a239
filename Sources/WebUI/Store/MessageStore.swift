import Synchronization

/// The last message of every topic the page uses (SPEC §14), bounded.
///
/// A topic the page uses is under `{base}/` and is not a command (`.../set`, `.../get`) or a request
/// (`.../request/...`): the page sends those through the API. An empty payload clears the topic (a retained
/// message removed). At ``capacity`` topics a new topic is not kept (its messages still reach the live pages);
/// ``droppedTopics`` counts them.
public final class MessageStore: Sendable {
    /// The default bound: 20000 topics.
    public static let defaultCapacity = 20000

    /// `{base}/`.
    public let prefix: String
    /// The most topics kept.
    public let capacity: Int

    struct State {
        var messages: [String: String] = [:]
        var bridgeStates: [String: String] = [:]
        var droppedTopics = 0
    }

    let state = Mutex(State())
    let bridgesPrefix: String

    /// Creates an empty store for the topics under `baseTopic`.
    public init(baseTopic: String, capacity: Int = MessageStore.defaultCapacity) {
        self.prefix = baseTopic + "/"
        self.bridgesPrefix = baseTopic + "/bridges/"
        self.capacity = max(1, capacity)
    }

    /// Whether the page uses `topic`: under the base topic, neither a command nor a request.
    public func isPageTopic(_ topic: String) -> Bool {
        guard topic.hasPrefix(prefix), topic.utf8.count > prefix.utf8.count else { return false }
        if topic.hasSuffix("/set") || topic.hasSuffix("/get") { return false }
        var segments = topic.utf8.split(separator: 0x2F, omittingEmptySubsequences: false).dropFirst().makeIterator()
        while let segment = segments.next() {
            if segment.elementsEqual("request".utf8) { return false }
        }
        return true
    }

    /// Records a message on a page topic (see ``isPageTopic(_:)``); an empty payload clears the topic.
    ///
    /// - Returns: whether the topic is a page topic (the message goes to the live pages).
    @discardableResult
    public func apply(topic: String, payload: String) -> Bool {
        guard isPageTopic(topic) else { return false }
        let bridge = bridgeID(ofStateTopic: topic)
        state.withLock { state in
            if let bridge {
                state.bridgeStates[bridge] = payload.isEmpty ? nil : payload
            }
            if payload.isEmpty {
                state.messages[topic] = nil
            } else if state.messages[topic] != nil || state.messages.count < capacity {
                state.messages[topic] = payload
            } else {
                state.droppedTopics += 1
            }
        }
        return true
    }

    /// The last payload of `topic`, if any.
    public func payload(of topic: String) -> String? {
        state.withLock { $0.messages[topic] }
    }

    /// Every kept message, in topic order.
    public func snapshot() -> [(topic: String, payload: String)] {
        let messages = state.withLock { $0.messages }
        return messages.sorted { $0.key < $1.key }.map { (topic: $0.key, payload: $0.value) }
    }

    /// The number of topics kept.
    public var count: Int { state.withLock { $0.messages.count } }

    /// The number of messages on new topics not kept because the store was full.
    public var droppedTopics: Int { state.withLock { $0.droppedTopics } }

    /// The cluster's bridges (those with a retained `{base}/bridges/{id}/state`), in id order.
    public var bridges: [String] {
        state.withLock { $0.bridgeStates.keys.sorted() }
    }

    /// The bridges whose state is `online`, in id order.
    public var onlineBridges: [String] {
        state.withLock { state in state.bridgeStates.filter { $0.value == "online" }.keys.sorted() }
    }

    /// `id` for `{base}/bridges/{id}/state`, else nil.
    func bridgeID(ofStateTopic topic: String) -> String? {
        guard topic.hasPrefix(bridgesPrefix), topic.hasSuffix("/state") else { return nil }
        let rest = topic.utf8.dropFirst(bridgesPrefix.utf8.count).dropLast(6)
        guard !rest.isEmpty, !rest.contains(0x2F) else { return nil }
        return String(Substring(rest))
    }
}
