import Foundation
import Testing

/// Markers for "nothing happened" checks: events that prove the bridge has passed the point where
/// the unwanted thing would have happened, so that a check after them cannot pass only because
/// the bridge had not got there yet (instead of a fixed real-time wait).
extension Harness {
    /// Sends `{base}/bridge/request/{command}` with a fresh transaction and returns the answer on
    /// `bridge/response/{command}`. The supervisor answers requests in its own order of events,
    /// so the answer reflects every device it had taken (or refused) before.
    func bridgeRequest(_ command: String, _ fields: String = "", timeout: Duration = .seconds(15)) async throws -> [String: Any] {
        let transaction = "marker-\(UInt32.random(in: 0...UInt32.max))"
        let mark = observer.count
        let members = (fields.isEmpty ? [] : [fields]) + [#""transaction": "\#(transaction)""#]
        try await publish("ble/bridge/request/\(command)", "{\(members.joined(separator: ", "))}")
        let response = try await waitFor("ble/bridge/response/\(command)", after: mark, timeout: timeout) {
            $0.object?["transaction"] as? String == transaction
        }
        guard let object = response.object else { throw HarnessError("the \(command) response is not a JSON object: \(response)") }
        return object
    }

    /// Asks for `health_check` until its answer satisfies `predicate` (each answer is the state
    /// at that moment; the request's round trip paces the loop) and returns that answer.
    @discardableResult
    func waitForHealthCheck(
        timeout: Duration = .seconds(15), _ what: String, where predicate: ([String: Any]) -> Bool
    ) async throws -> [String: Any] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let health = try await bridgeRequest("health_check")
            if predicate(health) { return health }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("no health_check answer with \(what) within \(timeout); the last: \(health)\n\(context())")
            }
        }
    }

    /// Waits until the bridge's log holds at least `count` lines satisfying `predicate`, and
    /// returns them.
    @discardableResult
    func waitForBridgeLogLines(
        count: Int, timeout: Duration = .seconds(30), _ what: String, where predicate: (Substring) -> Bool
    ) async throws -> [Substring] {
        try await waitForLines(count: count, timeout: timeout, "bridge log lines with \(what)", where: predicate) {
            Substring(bridgeLog)
        }
    }

    /// Waits until the simulator's log, from its byte `offset` on (`simulatorLog.utf8.count` at a mark), holds at
    /// least `count` lines satisfying `predicate`, and returns them.
    @discardableResult
    func waitForSimulatorLogLines(
        count: Int, after offset: Int = 0, timeout: Duration = .seconds(30), _ what: String,
        where predicate: (Substring) -> Bool
    ) async throws -> [Substring] {
        try await waitForLines(count: count, timeout: timeout, "simulator log lines with \(what)", where: predicate) {
            Substring(simulatorLog.utf8.dropFirst(offset))
        }
    }

    /// Polls `text` (a log file) until it holds `count` lines satisfying `predicate`.
    private func waitForLines(
        count: Int, timeout: Duration, _ what: String, where predicate: (Substring) -> Bool, text: () -> Substring
    ) async throws -> [Substring] {
        let deadline = ContinuousClock.now + timeout
        while true {
            let lines = text().split(separator: "\n").filter(predicate)
            if lines.count >= count { return lines }
            guard ContinuousClock.now < deadline else {
                throw HarnessError("\(lines.count) of \(count) \(what) within \(timeout)\n\(context())")
            }
            // The log is a file: poll it at a short interval.
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
