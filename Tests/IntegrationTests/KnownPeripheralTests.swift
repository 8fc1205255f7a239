import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Known peripherals (SPEC §5): the state file, reconnecting stored peripherals at start before
/// any scan result, and the `forget` and `reconnect` bridge requests.
@Suite(.timeLimit(.minutes(3)))
struct KnownPeripheralTests {
    /// A harness whose bridge runs with `configFile` (written by the test; `${MQTT_PORT}` is the
    /// broker's port).
    static func options(configFile: String, startBridge: Bool = true) -> HarnessOptions {
        var options = HarnessOptions()
        options.configFile = configFile
        options.startBridge = startBridge
        return options
    }

    /// The configuration of a bridge that knows only its state file: no service filter, no
    /// `devices` entries.
    static func stateOnlyConfig(_ stateFile: String) -> String {
        """
        mqtt:
          url: mqtt://127.0.0.1:${MQTT_PORT}
          client_id: bridge-under-test
        bluetooth:
          adapter: hci0
        state_file: \(stateFile)
        reconnect:
          initial_delay: 200ms
          max_delay: 1s

        """
    }

    /// Runs the bridge with a service filter until the three demo devices are stored, stops it
    /// (SIGTERM), and returns the bridge log's length (the next run's log starts there).
    static func firstRun(_ harness: Harness, config: String, stateFile: String) async throws -> Int {
        try FaultConfig.withStateFile(stateFile).write(toFile: config, atomically: true, encoding: .utf8)
        try harness.startBridge()
        for segment in Demo.connectedSegments {
            try await harness.waitFor("ble/\(segment)/availability") { $0.payload == "online" }
        }
        _ = try await StateFileContent.wait(stateFile, "the three demo devices", context: harness.context) { content in
            FaultConfig.connectedAddresses.allSatisfy { content.entry($0) != nil }
        }
        let termination = await harness.runningBridge.stop(grace: .seconds(10))
        #expect(termination == .exited(0), "first run ended with \(termination.map(\.description) ?? "nothing")")
        return harness.bridgeLog.utf8.count
    }

    @Test("the state file is written after the first connection: addresses, address types, names, services, characteristics")
    func stateFileWritten() async throws {
        let dir = try FaultPaths.temporaryDirectory()
        defer { FaultPaths.remove(dir) }
        let stateFile = "\(dir)/state/peripherals.json"
        try FaultConfig.withStateFile(stateFile).write(toFile: "\(dir)/bridge.yaml", atomically: true, encoding: .utf8)
        try await Harness.with(Self.options(configFile: "\(dir)/bridge.yaml")) { harness in
            try await harness.waitFor("ble/\(Demo.heartRate)/availability") { $0.payload == "online" }
            let content = try await StateFileContent.wait(stateFile, "the demo devices", context: harness.context) {
                content in FaultConfig.connectedAddresses.allSatisfy { content.entry($0) != nil }
            }
            let hr = try #require(content.entry(Demo.heartRateAddress))
            #expect(hr["address"] as? String == Demo.heartRateAddress, "\(hr)")
            #expect(hr["address_type"] as? String == "public", "\(hr)")
            #expect(hr["name"] as? String == "Polar H10 Sim", "\(hr)")
            let services = (hr["services"] as? [String] ?? []).map { $0.lowercased() }
            #expect(services.contains { $0.hasPrefix("0000180d") || $0 == "180d" }, "services: \(hr)")
            #expect(services.contains { $0.hasPrefix("0000180f") || $0 == "180f" }, "services: \(hr)")
            let characteristics = hr["characteristics"] as? [String: Any] ?? [:]
            #expect(characteristics["180d/2a37"] != nil, "the characteristic map: \(hr)")
            let env = try #require(content.entry(Demo.environmentAddress))
            #expect(env["address_type"] as? String == "random", "\(env)")
            #expect(content.entry(Demo.otherAddress) == nil, "the Other Device is not wanted: \(content.peripherals)")
            // Written atomically: no temporary file left behind.
            let leftovers = try FileManager.default.contentsOfDirectory(atPath: "\(dir)/state").filter { $0 != "peripherals.json" }
            #expect(leftovers.isEmpty, "files next to the state file: \(leftovers)")
        }
    }

    @Test("a corrupt state file is reported, moved aside, and the bridge starts without it")
    func corruptStateFile() async throws {
        let dir = try FaultPaths.temporaryDirectory()
        defer { FaultPaths.remove(dir) }
        let stateFile = "\(dir)/peripherals.json"
        let garbage = "{\"peripherals\": [{\"address\": \"C8:12:34"  // cut short
        try garbage.write(toFile: stateFile, atomically: true, encoding: .utf8)
        try FaultConfig.withStateFile(stateFile).write(toFile: "\(dir)/bridge.yaml", atomically: true, encoding: .utf8)
        try await Harness.with(Self.options(configFile: "\(dir)/bridge.yaml")) { harness in
            let line = try await harness.waitForBridgeLog("the corrupt state file") {
                $0.contains("state file") && $0.contains("unusable") && $0.contains("moved")
            }
            let aside = try FileManager.default.contentsOfDirectory(atPath: dir).filter { $0.hasPrefix("peripherals.json.corrupt") }
            #expect(aside.count == 1, "moved-aside files: \(aside); log: \(line)")
            if let name = aside.first {
                #expect(ChildProcess.read("\(dir)/\(name)") == garbage, "the moved file keeps the corrupt content")
                #expect(line.contains(name), "the log names where it went: \(line)")
            }
            // It starts without it, connects, and writes a good one.
            try await harness.waitFor("ble/\(Demo.heartRate)/availability") { $0.payload == "online" }
            _ = try await StateFileContent.wait(stateFile, "a new state file", context: harness.context) {
                $0.entry(Demo.heartRateAddress) != nil
            }
            #expect(harness.runningBridge.isRunning)
        }
    }

    @Test(
        "a restarted bridge connects its stored peripherals before any scan result",
        arguments: [false, true])
    func restartReconnectsStored(deviceObjectRemoved: Bool) async throws {
        let dir = try FaultPaths.temporaryDirectory()
        defer { FaultPaths.remove(dir) }
        let stateFile = "\(dir)/peripherals.json"
        let config = "\(dir)/bridge.yaml"
        var options = Self.options(configFile: config, startBridge: false)
        // Adapter1.ConnectDevice exists only in an experimental bluetoothd (-E).
        if deviceObjectRemoved { options.simulatorArguments = ["--experimental"] }
        try await Harness.with(options) { harness in
            let offset = try await Self.firstRun(harness, config: config, stateFile: stateFile)
            // No scan result can arrive from now on: the next scan starts stalled.
            try await harness.simControl("StallDiscovery")
            if deviceObjectRemoved {
                // BlueZ forgot the device too: only Adapter1.ConnectDevice can reach it.
                try await harness.simControl("RemoveDeviceObject", Demo.heartRateAddress)
            }
            // The second run knows only its state file (no service filter, no devices entries).
            try Self.stateOnlyConfig(stateFile).write(toFile: config, atomically: true, encoding: .utf8)
            let mark = harness.observer.count
            let before = try await harness.simStats()
            try harness.startBridge()
            for segment in Demo.connectedSegments {
                try await harness.waitFor("ble/\(segment)/availability", after: mark) { $0.payload == "online" }
            }
            try await harness.waitFor("ble/\(Demo.heartRate)/180d/2a37", after: mark)
            let how =
                deviceObjectRemoved
                ? "stored peripheral \(Demo.heartRateAddress): not in BlueZ's tree, trying ConnectDevice"
                : "stored peripheral \(Demo.heartRateAddress): BlueZ still knows it, connecting"
            try await harness.waitForBridgeLog(from: offset, "'\(how)'") { $0.contains(how) }
            let first = try await harness.waitForBridgeLog(from: offset, "the time to the first value") {
                $0.contains("stored peripheral \(Demo.heartRateAddress) publishing")
            }
            print("restart (\(deviceObjectRemoved ? "ConnectDevice" : "device object")): \(first)")
            // The connection came before any scan: the scan is still stalled (it reported nothing),
            // and the log shows the connect before any scan start.
            let lines = harness.bridgeLog(from: offset).split(separator: "\n")
            let connect = lines.firstIndex { $0.contains(how) }
            let scan = lines.firstIndex { $0.contains("scanning on") }
            #expect(connect != nil && (scan == nil || connect! < scan!), "connect at line \(String(describing: connect)), scan at \(String(describing: scan))")
            let stats = try await harness.simStats()
            #expect(JSON.integer(stats.raw["connect_attempts"]) ?? 0 > 0)
            let startsAfter = try #require(JSON.integer(stats.adapter()["discovery_starts"]), "GetStats: \(stats.adapter())")
            let startsBefore = try #require(JSON.integer(before.adapter()["discovery_starts"]), "GetStats: \(before.adapter())")
            let scans = startsAfter - startsBefore
            // At most the one scan that started stalled, and the simulator reported no advertisement
            // ("device found") since the stall.
            #expect(scans <= 1, "\(scans) scans started: the stalled one was restarted")
            let sinceStall = harness.simulatorLog.components(separatedBy: "discovery stalled (injected)").dropFirst().joined()
            #expect(!sinceStall.isEmpty, "the simulator logged no stall")
            #expect(!sinceStall.contains("device found"), "a scan result arrived:\n\(sinceStall)")
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    @Test("forget removes a peripheral: response, state file, BlueZ's device, not reconnected")
    func forget() async throws {
        let dir = try FaultPaths.temporaryDirectory()
        defer { FaultPaths.remove(dir) }
        let stateFile = "\(dir)/peripherals.json"
        let config = "\(dir)/bridge.yaml"
        try await Harness.with(Self.options(configFile: config, startBridge: false)) { harness in
            let offset = try await Self.firstRun(harness, config: config, stateFile: stateFile)
            try Self.stateOnlyConfig(stateFile).write(toFile: config, atomically: true, encoding: .utf8)
            let started = harness.observer.count
            try harness.startBridge()
            for segment in Demo.connectedSegments {
                try await harness.waitFor("ble/\(segment)/availability", after: started) { $0.payload == "online" }
            }
            let mark = harness.observer.count
            try await harness.publish("ble/bridge/request/forget", #"{"device": "\#(Demo.heartRate)", "transaction": "f-1"}"#)
            let response = try await harness.waitFor("ble/bridge/response/forget", after: mark) { _ in true }
            let object = try #require(response.object, "\(response)")
            #expect(object["status"] as? String == "ok", "\(response)")
            #expect(object["transaction"] as? String == "f-1", "\(response)")
            #expect(object["data"] is [String: Any], "\(response)")
            try await harness.waitFor("ble/\(Demo.heartRate)/availability", after: mark) { $0.payload == "offline" }
            try await harness.waitForBridgeLog(from: offset, "the forget") {
                $0.contains("forgetting \(Demo.heartRateAddress)")
            }
            // Gone from the state file, the others stay.
            _ = try await StateFileContent.wait(stateFile, "the state file without the forgotten device", context: harness.context) {
                $0.entry(Demo.heartRateAddress) == nil && $0.entry(Demo.environmentAddress) != nil
                    && $0.entry(Demo.echoAddress) != nil
            }
            // BlueZ's device removed (RemoveDevice), not connected, and it stays so.
            let deadline = ContinuousClock.now + .seconds(10)
            var stats = try await harness.simStats()
            while stats.flag(Demo.heartRateAddress, "exported") && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(100))  // polling the simulator
                stats = try await harness.simStats()
            }
            #expect(!stats.flag(Demo.heartRateAddress, "exported"), "BlueZ still has the device object")
            #expect(!stats.flag(Demo.heartRateAddress, "connected"))
            let connects = stats.count(Demo.heartRateAddress, "connects")
            // The marker: the forgotten device's session ended, and the supervisor answered a
            // request after that (its events are handled in order: whether the device was taken
            // again was decided before the answer). A new session would be in the answer.
            let path = "/org/bluez/hci0/dev_" + Demo.heartRateAddress.replacingOccurrences(of: ":", with: "_")
            try await harness.waitForBridgeLog(from: offset, "the end of the forgotten device's session") {
                $0.contains("the session of \(path) ended")
            }
            let answer = try await harness.bridgeRequest("devices")
            let listed = try #require((answer["data"] as? [String: Any])?["devices"] as? [[String: Any]], "\(answer)")
            #expect(!listed.isEmpty, "the other devices are listed: \(answer)")
            #expect(!listed.contains { $0["address"] as? String == Demo.heartRateAddress }, "the forgotten device is managed again: \(answer)")
            // A stored peripheral that BlueZ dropped is connected again by a timer of the bridge
            // (1 s after the removal, `SupervisorCore.storedReconnectDelay`): a forgotten one must
            // not be. This window is that timer's, not a wait for the bridge to catch up.
            await #expect(throws: HarnessError.self, "the forgotten device came back online") {
                try await harness.waitFor("ble/\(Demo.heartRate)/availability", after: mark, timeout: .seconds(2)) {
                    $0.payload == "online"
                }
            }
            let online = harness.observer.all.dropFirst(mark).filter {
                $0.topic == "ble/\(Demo.heartRate)/availability" && $0.payload == "online"
            }
            #expect(online.isEmpty, "the forgotten device came back online: \(online)")
            #expect(try await harness.simStats().count(Demo.heartRateAddress, "connects") == connects)
            let retained = try await harness.retained("ble/\(Demo.heartRate)/availability")
            #expect(retained.payload == "offline", "\(retained)")
            // The device list no longer has it.
            let devices = try await harness.retained("ble/bridge/devices")
            #expect(
                !(JSON.array(devices.payload) ?? []).contains { ($0 as? [String: Any])?["address"] as? String == Demo.heartRateAddress },
                "\(devices)")
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: [Demo.environmentAddress, Demo.echoAddress])
        }
    }

    @Test("reconnect forces offline → online, values again, one subscription per connection")
    func reconnectRequest() async throws {
        try await Harness.with { harness in
            let mark = try await FaultTests.settle(harness)
            let before = try await harness.simStats()
            try await harness.publish("ble/bridge/request/reconnect", #"{"device": "\#(Demo.heartRateAddress)", "transaction": 7}"#)
            let response = try await harness.waitFor("ble/bridge/response/reconnect", after: mark) { _ in true }
            let object = try #require(response.object, "\(response)")
            #expect(object["status"] as? String == "ok", "\(response)")
            #expect(JSON.integer(object["transaction"]) == 7, "\(response)")
            try await harness.expectRecovery(of: Demo.heartRate, after: mark, topics: FaultTests.topics(Demo.heartRate))
            try await harness.waitForBridgeLog("the reconnect request") {
                $0.contains("reconnecting \(Demo.heartRateAddress) on request")
            }
            let after = try await harness.simStats()
            #expect(after.count(Demo.heartRateAddress, "connects") == before.count(Demo.heartRateAddress, "connects") + 1)
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    @Test("forget and reconnect of an unknown device: an error response, nothing else changes")
    func unknownDevice() async throws {
        try await Harness.with { harness in
            let mark = try await FaultTests.settle(harness)
            for command in ["forget", "reconnect"] {
                try await harness.publish("ble/bridge/request/\(command)", #"{"device": "no-such-device", "transaction": "u"}"#)
                let response = try await harness.waitFor("ble/bridge/response/\(command)", after: mark) { _ in true }
                let object = try #require(response.object, "\(response)")
                #expect(object["status"] as? String == "error", "\(response)")
                #expect(object["error"] != nil, "\(response)")
                #expect(object["transaction"] as? String == "u", "\(response)")
            }
            #expect(harness.runningBridge.isRunning)
            for segment in Demo.connectedSegments { #expect(harness.availability(segment) == "online") }
        }
    }
}
