import Foundation
import Testing

/// Which peripherals are connected: those advertising a configured service, or named by a
/// `devices` entry; never others (the demo's "Other Device" advertises only HID, 1812).
@Suite(.timeLimit(.minutes(2)))
struct ScanFilterTests {
    /// With the tests' config the bridge scans with a service filter; bridge.yaml has a name
    /// match, so the bridge scans unfiltered and sees the Other Device, but must not connect it.
    @Test("a peripheral without a configured service is never connected", arguments: [false, true])
    func otherDeviceNotConnected(demoConfig: Bool) async throws {
        var options = HarnessOptions()
        if demoConfig { options.configFile = Paths.demoConfig }
        try await Harness.with(options) { harness in
            try await checkOtherDeviceNotConnected(harness, demoConfig: demoConfig)
        }
    }

    /// The checks of ``otherDeviceNotConnected(demoConfig:)`` (a separate function: Swift 6.3.1
    /// crashes in SendNonSendable when the closure captures the test's locals).
    func checkOtherDeviceNotConnected(_ harness: Harness, demoConfig: Bool) async throws {
        let segments = demoConfig ? ["polar_h10", "env_sensor", "echo"] : Demo.connectedSegments
        let heartRate = demoConfig ? "ble/polar_h10/180d/heart_rate" : "ble/\(Demo.heartRate)/180d/2a37"
        for device in segments {
            try await harness.waitFor("ble/\(device)/availability") { $0.payload == "online" }
        }
        if demoConfig {
            // The unfiltered scan reports it to the bridge.
            try await harness.waitForLine(in: harness.simulatorLogPath, "the Other Device found") {
                $0.contains("address=\(Demo.otherAddress)") && $0.hasSuffix(" device found")
            }
        }
        // Let the bridge run on for three more heart rate notifications (about 3 s of scanning).
        var mark = harness.observer.count
        for _ in 0..<3 {
            mark = try await harness.waitFor(heartRate, after: mark).index + 1
        }
        let connects = harness.simulatorLog.split(separator: "\n").filter {
            $0.contains("address=\(Demo.otherAddress)") && $0.hasSuffix(" connected")
        }
        #expect(connects.isEmpty, "the Other Device was connected:\n\(connects.joined(separator: "\n"))")
        let topics = harness.observer.all.filter { $0.topic.contains(Demo.other) }
        #expect(topics.isEmpty, "topics of the Other Device: \(topics)")
        if let devices = harness.observer.messages("ble/bridge/devices").last {
            let other = (JSON.array(devices.payload) ?? []).compactMap { $0 as? [String: Any] }
                .first { $0["address"] as? String == Demo.otherAddress }
            #expect(other.map { JSON.bool($0["connected"]) == false } ?? true, "\(devices)")
        }
        // The three wanted ones were connected (the simulator saw it).
        for address in [Demo.heartRateAddress, Demo.environmentAddress, Demo.echoAddress] {
            let connected = harness.simulatorLog.split(separator: "\n").contains {
                $0.contains("address=\(address)") && $0.hasSuffix(" connected")
            }
            #expect(connected, "no connect of \(address) in the simulator's log")
        }
    }

    @Test("a peripheral named by a devices entry is connected without advertising a configured service")
    func configuredDeviceConnected() async throws {
        var options = HarnessOptions()
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
            bluetooth:
              services: ["180d"]
            devices:
              - match: { name: "Other Dev*" }
                name: other
                characteristics:
                  - uuid: "2a4d"
                    name: report
                    format: uint8

            """
        }
        try await Harness.with(options) { harness in
            try await harness.waitFor("ble/other/availability") { $0.payload == "online" }
            let report = try await harness.waitFor("ble/other/1812/report")
            let object = try #require(report.object, "\(report)")
            let bytes = try #require(Hex.bytes(object["raw"] as? String ?? "x"), "\(report)")
            #expect(JSON.integer(object["value"]) == bytes.first.map(Int.init), "\(report)")
            // The heart rate monitor still comes through the service filter.
            try await harness.waitFor("ble/\(Demo.heartRate)/availability") { $0.payload == "online" }
        }
    }
}
