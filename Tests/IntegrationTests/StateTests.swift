import Foundation
import Testing

/// The retained state topics: `bridge/state`, `{device}/availability`, `bridge/devices`.
@Suite(.timeLimit(.minutes(2)))
struct StateTests {
    @Test("bridge/state and availability are online and retained")
    func stateAndAvailabilityRetained() async throws {
        try await Harness.with { harness in
            try await harness.waitFor("ble/bridge/state") { $0.payload == "online" }
            for device in Demo.connectedSegments {
                try await harness.waitFor("ble/\(device)/availability") { $0.payload == "online" }
            }
            // A subscriber that comes later gets them as retained messages.
            let state = try await harness.retained("ble/bridge/state")
            #expect(state.retained && state.payload == "online", "\(state)")
            for device in Demo.connectedSegments {
                let availability = try await harness.retained("ble/\(device)/availability")
                #expect(availability.retained && availability.payload == "online", "\(availability)")
            }
        }
    }

    @Test("bridge/devices lists the connected devices with their fields, retained")
    func devicesList() async throws {
        try await Harness.with { harness in
            let expectedServices = [
                Demo.heartRateAddress: ["180d", "180f"],
                Demo.environmentAddress: ["181a"],
                Demo.echoAddress: [Demo.echoService],
            ]
            let message = try await harness.waitFor("ble/bridge/devices") { message in
                let entries = (JSON.array(message.payload) ?? []).compactMap { $0 as? [String: Any] }
                return expectedServices.allSatisfy { address, services in
                    entries.contains { entry in
                        entry["address"] as? String == address && JSON.bool(entry["connected"]) == true
                            && Set(entry["services"] as? [String] ?? []).isSuperset(of: services)
                    }
                }
            }
            let entries = try #require(JSON.array(message.payload)?.compactMap { $0 as? [String: Any] })
            for entry in entries {
                let address = try #require(entry["address"] as? String, "no address: \(entry)")
                #expect(address.wholeMatch(of: /[0-9A-F]{2}(:[0-9A-F]{2}){5}/) != nil, "address format: \(address)")
                #expect(["public", "random"].contains(entry["address_type"] as? String), "address_type: \(entry)")
                #expect(JSON.bool(entry["connected"]) != nil, "connected: \(entry)")
                #expect(entry["rssi"] is NSNull || JSON.integer(entry["rssi"]) != nil, "rssi: \(entry)")
                #expect(entry["services"] is [String], "services: \(entry)")
                #expect(entry["name"] is String, "name: \(entry)")
                if address == Demo.otherAddress {
                    #expect(JSON.bool(entry["connected"]) == false, "the Other Device is connected: \(entry)")
                }
            }
            func entry(_ address: String) -> [String: Any]? { entries.first { $0["address"] as? String == address } }
            #expect(entry(Demo.heartRateAddress)?["name"] as? String == Demo.heartRate)
            #expect(entry(Demo.heartRateAddress)?["address_type"] as? String == "public")
            #expect(entry(Demo.environmentAddress)?["name"] as? String == Demo.environment)
            #expect(entry(Demo.environmentAddress)?["address_type"] as? String == "random")
            #expect(entry(Demo.echoAddress)?["name"] as? String == Demo.echo)

            let retained = try await harness.retained("ble/bridge/devices")
            #expect(retained.retained, "bridge/devices is not retained: \(retained)")
            #expect(JSON.array(retained.payload) != nil, "\(retained)")
        }
    }

    @Test("SIGTERM and SIGINT: offline (retained), devices disconnected, exit status 0", arguments: [SIGTERM, SIGINT])
    func shutdown(signal: Int32) async throws {
        try await Harness.with { harness in
            try await harness.waitFor("ble/bridge/state") { $0.payload == "online" }
            for device in Demo.connectedSegments {
                try await harness.waitFor("ble/\(device)/availability") { $0.payload == "online" }
            }
            let mark = harness.observer.count
            harness.runningBridge.send(signal)
            let termination = await harness.runningBridge.waitForExit(timeout: .seconds(15))
            #expect(termination == .exited(0), "the bridge ended with \(termination.map(\.description) ?? "nothing: still running")\n\(harness.context())")

            try await harness.waitFor("ble/bridge/state", after: mark, timeout: .seconds(5)) { $0.payload == "offline" }
            let state = try await harness.retained("ble/bridge/state")
            #expect(state.retained && state.payload == "offline", "\(state)")
            for device in Demo.connectedSegments {
                let availability = try await harness.retained("ble/\(device)/availability")
                #expect(availability.retained && availability.payload == "offline", "\(availability)")
            }
            // The peripherals were disconnected (the simulator logs each disconnect).
            for address in [Demo.heartRateAddress, Demo.environmentAddress, Demo.echoAddress] {
                try await harness.waitForLine(in: harness.simulatorLogPath, timeout: .seconds(5), "disconnected \(address)") {
                    $0.contains("address=\(address)") && $0.hasSuffix(" disconnected")
                }
            }
        }
    }
}
