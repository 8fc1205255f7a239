import Foundation
import Testing

/// SPEC §8 (commands.allow) and §9 (health) on bluez-sim.
@Suite(.timeLimit(.minutes(2)))
struct CommandPolicyAndHealthTests {
    @Test("commands.allow: a write outside the patterns gets not_allowed and reaches nothing; bridge/health is published")
    func allowAndHealth() async throws {
        let options = Policies.options(
            commands: """
                commands: { allow: ["valve/ffe0/ffe1"] }
                health: { interval: 1s }
                """,
            devices: """
                  - match: { address: "\(Policies.valve)" }
                    name: valve
                """)
        try await Harness.with(options) { harness in
            try await harness.waitFor("ble/valve/availability", timeout: .seconds(15)) { $0.payload == "online" }
            let mark = harness.observer.count
            try await harness.publish("ble/valve/ffe0/ffe2/set", #"{"raw": "09", "transaction": "no"}"#)
            let refused = try await harness.waitFor("ble/valve/ffe0/ffe2/result", after: mark)
            #expect(refused.payload.contains(#""code":"not_allowed""#), "\(refused)")
            #expect(refused.payload.contains(#""transaction":"no""#), "\(refused)")
            // An allowed read after it: results are answered in order per device (one GATT queue),
            // so a write of the refused command would have reached the peripheral before it.
            let after = try await harness.getCommand("ble/valve/ffe0/ffe1", #"{"transaction": "after"}"#, transaction: "after")
            #expect(after.status == "ok", "\(after)")
            #expect(harness.writeLogEntries.isEmpty, "written: \(harness.writeLogEntries)")
            let stats = try await harness.simStats()
            #expect(stats.count(Policies.valve, "write_failures") == 0, "\(stats.device(Policies.valve))")
            // A health message from after the valve came online (the first, at 1 s, may predate it).
            let health = try await harness.waitFor("ble/bridge/health", after: mark, timeout: .seconds(5))
            let object = try #require(health.object, "\(health)")
            #expect(JSON.integer(object["rss_bytes"]).map { $0 > 1_000_000 } == true, "\(health)")
            let devices = object["devices"] as? [String: Any]
            let valve = devices?["valve"] as? [String: Any]
            #expect(JSON.bool(valve?["connected"]) == true, "\(health)")
            #expect((object["bluez"] as? [String: Any]).flatMap { JSON.bool($0["available"]) } == true, "\(health)")
        }
    }
}

/// `bridge/state` says whether the bridge runs, whatever BlueZ and the bus do.
@Suite(.timeLimit(.minutes(2)))
struct BridgeStateWithoutBusTests {
    @Test("no D-Bus system bus: bridge/state is online once the broker is connected; SIGTERM still exits 0")
    func onlineWithoutBus() async throws {
        var options = HarnessOptions()
        options.startSimulator = false
        options.bridgeEnvironment = ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/nonexistent/ble-mqtt-bridge-test-bus"]
        try await Harness.with(options) { harness in
            try await harness.waitFor("ble/bridge/state", timeout: .seconds(15)) { $0.payload == "online" }
            _ = try await harness.waitForBridgeLog(from: 0, "the bus retries") { $0.contains("cannot connect to the D-Bus system bus") }
            let bridge = harness.runningBridge
            bridge.send(SIGTERM)
            let ended = await bridge.waitForExit(timeout: .seconds(10))
            #expect(ended == .exited(0), "\(bridge.tail())")
            try await harness.waitFor("ble/bridge/state") { $0.payload == "offline" }
        }
    }
}
