import BridgeCore
import Synchronization
import WebUI

/// Stands in for the broker: records what the server publishes; `answer` (if set) makes replies at once.
final class FakeBroker: PageBroker {
    let published = Mutex<[(topic: String, payload: String)]>([])
    let connected: Bool
    /// Called for every publish; its messages are delivered to `core` before `publish` returns.
    let answer: (@Sendable (String, JSONValue) -> [(String, String)])?
    let core = Mutex<PageCore?>(nil)

    init(connected: Bool = true, answer: (@Sendable (String, JSONValue) -> [(String, String)])? = nil) {
        self.connected = connected
        self.answer = answer
    }

    func publish(topic: String, payload: [UInt8]) -> WebError? {
        guard connected else { return WebError(.notConnected, "the broker is not connected") }
        published.withLock { $0.append((topic, String(decoding: payload, as: UTF8.self))) }
        if let answer, let core = core.withLock({ $0 }), let value = try? JSONParser.parse(payload) {
            for (topic, text) in answer(topic, value) { core.receive(topic: topic, payload: Array(text.utf8)) }
        }
        return nil
    }

    var publishedCount: Int { published.withLock { $0.count } }

    /// A core wired to this broker.
    func makeCore(_ settings: WebSettings) -> PageCore {
        let core = PageCore(settings: settings, broker: self)
        self.core.withLock { $0 = core }
        return core
    }
}

func settings(cluster: Bool = false, token: String? = nil) -> WebSettings {
    WebSettings(baseTopic: "ble", cluster: cluster, listen: WebListenAddress("127.0.0.1:8099")!, authToken: token)
}

/// Waits (yielding, bounded) until `condition` holds.
func eventually(_ condition: () -> Bool) async -> Bool {
    for _ in 0..<2000 {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
