import Foundation
import Testing

/// SPEC §4's deadline rule and SPEC §3's GATT internals and Device Information strings, on bluez-sim.
@Suite(.timeLimit(.minutes(2)))
struct DeadlineAndInternalsTests {
    static let valveDevices = """
          - match: { address: "\(Policies.valve)" }
            name: valve
        """

    @Test("a write the peripheral holds 5 s, five more behind it: every result within commands.timeout, none sent late")
    func deadlines() async throws {
        let options = Policies.options(commands: "commands: { timeout: 2s }", devices: Self.valveDevices)
        try await Harness.with(options) { harness in
            try await harness.waitFor("ble/valve/availability", timeout: .seconds(15)) { $0.payload == "online" }
            let mark = harness.observer.count
            // One mosquitto_pub for the six: they arrive within milliseconds of each other, at the
            // latest when it has returned.
            try await harness.publishEachLine(
                "ble/valve/ffe0/ffe1/set", (0..<6).map { #"{"raw": "0\#($0)", "transaction": \#($0)}"# })
            let sent = ContinuousClock.now
            for i in 0..<6 {
                _ = try await harness.waitFor("ble/valve/ffe0/ffe1/result", after: mark, timeout: .seconds(4)) {
                    $0.object.flatMap { JSON.integer($0["transaction"]) } == i
                }
            }
            let took = ContinuousClock.now - sent
            // The 2 s deadline plus the observer's latency on a loaded machine (the exact bound is
            // checked with a fake clock in BridgeTests; before, results came up to 9.6 s late).
            #expect(took < .milliseconds(3500), "the last result came \(took) after the first command")
            // The peripheral answers the first write 5 s after it came.
            try await harness.waitForLoggedWrite(Policies.valve, "0000ffe1-0000-1000-8000-00805f9b34fb", "00", timeout: .seconds(8))
            // A write to ffe2 after them: the device has one GATT queue and answers in order, so
            // whatever was left of the six was sent (and answered: a late write reaching ffe1 while
            // the first is pending is refused with InProgress, which the write log does not show,
            // and its result comes before this one) or dropped before it.
            let barrier = try await harness.setCommand(
                "ble/valve/ffe0/ffe2", #"{"raw": "5a", "transaction": "after"}"#, transaction: "after", timeout: .seconds(5))
            #expect(barrier.status == "ok", "\(barrier)")
            let results = harness.observer.messages("ble/valve/ffe0/ffe1/result").filter { $0.index > mark }
            #expect(results.count == 6, "\(results)")
            #expect(results.allSatisfy { $0.payload.contains(#""code":"timeout""#) }, "\(results)")
            // Nothing but the first reached the peripheral.
            let writes = harness.writeLogEntries.filter { $0.address == Policies.valve }
            #expect(writes.map(\.hex) == ["00", "5a"], "writes the peripheral got: \(writes)")
        }
    }

    @Test("no GAP/GATT topics; Device Information strings are text; a named 2a05 is published")
    func internals() async throws {
        let options = Policies.options(devices: Self.valveDevices)
        try await Harness.with(options) { harness in
            let maker = try await harness.waitFor("ble/valve/180a/2a29", timeout: .seconds(15))
            #expect(maker.object?["value"] as? String == "Acme Valves", "\(maker)")
            let model = try await harness.waitFor("ble/valve/180a/2a24")
            #expect(model.object?["value"] as? String == "V-100")
            let firmware = try await harness.waitFor("ble/valve/180a/2a26")
            #expect(firmware.object?["value"] as? String == "1.2", "trailing NUL dropped: \(firmware)")
            _ = try await harness.waitFor("ble/valve/ffe0/ffe2")
            let internals = harness.observer.all.filter { m in
                m.topic.split(separator: "/").contains { $0 == "1801" || $0 == "1800" || $0.hasPrefix("00001801-") }
            }
            #expect(internals.isEmpty, "GATT internals published: \(internals)")
            let devices = try await harness.retained("ble/bridge/devices")
            #expect(!devices.payload.contains("1801"), "\(devices)")
        }
        let named = Policies.options(devices: Self.valveDevices + """

                characteristics: [{ uuid: "2a05", name: service_changed }]
            """)
        try await Harness.with(named) { harness in
            _ = try await harness.waitFor("ble/valve/availability", timeout: .seconds(15)) { $0.payload == "online" }
            let list = try await harness.waitFor("ble/bridge/devices") { $0.payload.contains("\"connected\":true") }
            _ = list
            // Service Changed only indicates; it is subscribed now (the bridge logs it).
            _ = try await harness.waitForBridgeLog(from: 0, "subscribed to the named 2a05") {
                $0.contains("subscribed to 1 characteristics") || $0.contains("subscribed to 2 characteristics")
            }
        }
    }
}
