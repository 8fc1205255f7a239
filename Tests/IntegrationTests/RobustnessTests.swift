import Foundation
import Testing

/// Bad surroundings at start: no broker, no `org.bluez`, no adapter. The bridge says so, does
/// not crash, and recovers once the missing part appears.
@Suite(.timeLimit(.minutes(2)))
struct RobustnessTests {
    @Test("no broker at start: the bridge retries, says so, and connects once a broker listens")
    func brokerAbsentAtStart() async throws {
        var options = HarnessOptions()
        options.startBroker = false
        try await Harness.with(options) { harness in
            let line = try await harness.waitForBridgeLog("a retry of the broker connection") { line in
                let text = line.lowercased()
                return text.contains("retry") || text.contains("retrying") || text.contains("reconnect")
            }
            #expect(harness.runningBridge.isRunning, "the bridge exited after: \(line)\n\(harness.context())")
            try await harness.startBroker()
            try await harness.waitFor("ble/bridge/state") { $0.payload == "online" }
            try await harness.waitFor("ble/\(Demo.heartRate)/180d/2a37")
        }
    }

    @Test("no org.bluez on the bus at start: the bridge waits for it, says so, and goes on once it appears")
    func bluezAbsentAtStart() async throws {
        var options = HarnessOptions()
        options.startSimulator = false
        try await Harness.with(options) { harness in
            let line = try await harness.waitForBridgeLog("org.bluez") { $0.contains("org.bluez") }
            #expect(harness.runningBridge.isRunning, "the bridge exited after: \(line)\n\(harness.context())")
            try await harness.startSimulator()
            try await harness.waitFor("ble/\(Demo.heartRate)/availability") { $0.payload == "online" }
            try await harness.waitFor("ble/\(Demo.heartRate)/180d/2a37")
        }
    }

    @Test("an adapter that is not there: a clear message, no crash")
    func missingAdapter() async throws {
        var options = HarnessOptions()
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
            bluetooth:
              adapter: hci7
              services: ["180d"]

            """
        }
        try await Harness.with(options) { harness in
            let line = try await harness.waitForBridgeLog("the adapter hci7") { $0.contains("hci7") }
            if let termination = harness.runningBridge.termination {
                #expect(termination.isExit && termination != .exited(0), "after '\(line)': \(termination)")
            }
            // Either way the broker learns the bridge's state (online while waiting, or the will).
            try await harness.waitFor("ble/bridge/state")
        }
    }
}
