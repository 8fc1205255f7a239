import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Issue 5's faults, one test each, injected through bluez-sim's control interface
/// (`org.bluezsim.Control1`, scripts/sim/README.md). Every test proves: the bridge does not
/// crash, availability goes `offline` and back `online`, every characteristic that was
/// publishing publishes again, no duplicate subscriptions and no leaked connections (the
/// simulator's counters), and the bridge's log explains what happened.
@Suite(.timeLimit(.minutes(3)))
struct FaultTests {
    /// The value topics of the demo devices the tests wait for before injecting a fault: every
    /// notifying and every readable characteristic (those are read once after connecting).
    static let expectedTopics: [String: [String]] = [
        Demo.heartRate: ["180d/2a37", "180d/2a38", "180f/2a19"],
        Demo.environment: ["181a/2a6e", "181a/2a6f"],
        Demo.echo: [
            "\(Demo.echoService)/\(Demo.echoWrite)", "\(Demo.echoService)/\(Demo.echoNotify)",
            "\(Demo.echoService)/5e1f0005-b5a3-4c1d-9e0a-ec40ec40ec40",
            "\(Demo.echoService)/5e1f0006-b5a3-4c1d-9e0a-ec40ec40ec40",
        ],
    ]

    /// Waits until the demo devices are online and each published all of its value topics;
    /// returns the message index to inject a fault at.
    static func settle(_ harness: Harness, _ segments: [String] = Demo.connectedSegments) async throws -> Int {
        for segment in segments {
            try await harness.waitFor("ble/\(segment)/availability") { $0.payload == "online" }
            for topic in expectedTopics[segment] ?? [] {
                try await harness.waitFor("ble/\(segment)/\(topic)")
            }
        }
        return harness.observer.count
    }

    /// The demo topics of `segment`, as full topic names.
    static func topics(_ segment: String) -> Set<String> {
        Set((expectedTopics[segment] ?? []).map { "ble/\(segment)/\($0)" })
    }

    /// "N" of the bridge's `<address>: subscribed to N characteristics` lines, in order.
    static func subscribedCounts(_ log: Substring, _ address: String) -> [Int] {
        log.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "\(address): subscribed to ") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    // MARK: - 1. The device disconnects (link loss, out of range) and comes back

    @Test("1. link loss (DropConnection): offline, reconnect with backoff, online, values again")
    func linkLoss() async throws {
        try await Harness.with { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            try await harness.simControl("DropConnection", Demo.heartRateAddress)
            try await harness.expectRecovery(of: Demo.heartRate, after: mark, topics: Self.topics(Demo.heartRate))
            // The log tells: the link went down, a backoff, a new connection.
            try await harness.waitForBridgeLog(from: log, "Connected=false and a backoff") {
                $0.contains("\(Demo.heartRateAddress): connectedChanged(false)") && $0.contains("backing off")
            }
            try await harness.waitForBridgeLog(from: log, "a reconnection") {
                $0.contains("connecting to \(Demo.heartRateAddress)")
            }
            // The other devices were not disturbed.
            #expect(harness.availability(Demo.environment) == "online")
            #expect(harness.availability(Demo.echo) == "online")
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    @Test("1. out of range and back (SetInRange false → true): failed attempts while away, then online")
    func outOfRange() async throws {
        try await Harness.with { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            try await harness.simControl("SetInRange", Demo.heartRateAddress, "false")
            try await harness.waitFor("ble/\(Demo.heartRate)/availability", after: mark) { $0.payload == "offline" }
            // While away, connecting fails after the simulator's connect_timeout (5 s), as BlueZ does.
            try await harness.waitForBridgeLog(from: log, timeout: .seconds(20), "a failed attempt while out of range") {
                $0.contains("connect to \(Demo.heartRateAddress) failed") && $0.contains("le-connection-abort-by-local")
            }
            #expect(harness.availability(Demo.heartRate) == "offline")
            try await harness.simControl("SetInRange", Demo.heartRateAddress, "true")
            try await harness.expectRecovery(
                of: Demo.heartRate, after: mark, topics: Self.topics(Demo.heartRate), timeout: .seconds(30))
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    // MARK: - 2. Connect fails: le-connection-abort-by-local, InProgress

    @Test("2. Connect fails with le-connection-abort-by-local (twice): wait for Connected=false, retry, online")
    func connectAbortByLocal() async throws {
        try await Harness.with { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            let before = try await harness.simStats()
            try await harness.simControl(
                "FailNextConnect", Demo.heartRateAddress, "org.bluez.Error.Failed", "le-connection-abort-by-local", "2")
            try await harness.simControl("DropConnection", Demo.heartRateAddress)
            try await harness.expectRecovery(of: Demo.heartRate, after: mark, topics: Self.topics(Demo.heartRate))
            try await harness.waitForBridgeLog(from: log, "the abort") {
                $0.contains("connect to \(Demo.heartRateAddress) failed") && $0.contains("le-connection-abort-by-local")
            }
            // The link came up and failed: the bridge retries only after Connected=false. Whether
            // it saw Connected=false before or after the error reply (two paths, no order between
            // them), it never calls Connect while the simulator's link is still up.
            let after = try await harness.simStats()
            #expect(
                after.count(Demo.heartRateAddress, "connect_failures") - before.count(Demo.heartRateAddress, "connect_failures")
                    == 2, "both injected failures were hit")
            #expect(before.count(Demo.heartRateAddress, "connects_while_linked") >= 0, "the simulator counts them")
            #expect(
                after.count(Demo.heartRateAddress, "connects_while_linked")
                    == before.count(Demo.heartRateAddress, "connects_while_linked"),
                "no Connect while the failed link was still up")
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    @Test("2. Connect fails with InProgress: retry, online")
    func connectInProgress() async throws {
        try await Harness.with { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            try await harness.simControl("FailNextConnect", Demo.heartRateAddress, "org.bluez.Error.InProgress", "", "1")
            try await harness.simControl("DropConnection", Demo.heartRateAddress)
            let offline = try await harness.waitFor("ble/\(Demo.heartRate)/availability", after: mark) {
                $0.payload == "offline"
            }
            try await harness.waitForBridgeLog(from: log, "the InProgress failure") {
                $0.contains("connect to \(Demo.heartRateAddress) failed") && $0.contains("org.bluez.Error.InProgress")
            }
            // Issue 5: "retry with a delay chosen by the error class": InProgress backs off
            // briefly (the initial reconnect delay), not for the 30 s connect timeout.
            try await harness.waitFor(
                "ble/\(Demo.heartRate)/availability", after: offline.index + 1, timeout: .seconds(10)
            ) { $0.payload == "online" }
            try await harness.expectRecovery(
                of: Demo.heartRate, after: mark, topics: Self.topics(Demo.heartRate), timeout: .seconds(45))
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    // MARK: - 3. ServicesResolved before the GATT objects, and services that never resolve

    @Test("3. ServicesResolved=true before the GATT objects exist: wait for both, subscribe to everything")
    func resolvedBeforeGatt() async throws {
        try await Harness.with { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            let firstCounts = Self.subscribedCounts(harness.bridgeLog[...], Demo.heartRateAddress)
            try await harness.simControl("SetResolveBehaviour", Demo.heartRateAddress, "resolved-before-gatt:1s")
            try await harness.simControl("DropConnection", Demo.heartRateAddress)
            try await harness.expectRecovery(of: Demo.heartRate, after: mark, topics: Self.topics(Demo.heartRate))
            // The simulator did resolve first, and the bridge subscribed once the GATT objects came.
            try await harness.waitForLine(in: harness.simulatorLogPath, "the injected early ServicesResolved") {
                $0.contains("address=\(Demo.heartRateAddress)") && $0.contains("services resolved before the GATT objects exist")
            }
            try await harness.waitForBridgeLog(from: log, "subscribing once the GATT objects are present") {
                $0.contains("\(Demo.heartRateAddress): gattObjectsPresent → subscribing")
            }
            // Every characteristic again, not only those of the first service that appeared.
            let again = Self.subscribedCounts(harness.bridgeLog(from: log), Demo.heartRateAddress)
            #expect(
                again.last == firstCounts.first && firstCounts.first != nil,
                "subscribed to \(again) characteristics after the fault, \(firstCounts) before\n\(harness.context())")
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    @Test("3. services never resolve: the resolve timeout (20 s) disconnects, the retry resolves")
    func neverResolve() async throws {
        try await Harness.with { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            try await harness.simControl("SetResolveBehaviour", Demo.heartRateAddress, "never-resolve")
            try await harness.simControl("DropConnection", Demo.heartRateAddress)
            // The bridge reconnects: Connected, but the services never resolve.
            try await harness.waitForBridgeLog(from: log, "the reconnection") {
                $0.contains("\(Demo.heartRateAddress): connectSucceeded → resolving services")
                    || $0.contains("\(Demo.heartRateAddress): connectedChanged(true) → resolving services")
            }
            // The next connection resolves normally.
            try await harness.simControl("SetResolveBehaviour", Demo.heartRateAddress, "normal")
            try await harness.waitForBridgeLog(from: log, timeout: .seconds(40), "the resolve timeout") {
                $0.contains("\(Demo.heartRateAddress): tick → waiting for disconnect")
            }
            try await harness.waitForBridgeLog(from: log, "the disconnect after the timeout") {
                $0.contains("disconnecting \(Demo.heartRateAddress)")
            }
            try await harness.expectRecovery(
                of: Demo.heartRate, after: mark, topics: Self.topics(Demo.heartRate), timeout: .seconds(40))
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    // MARK: - 4. The device object vanishes from BlueZ's tree

    @Test("4. the device object is removed (InterfacesRemoved) while known: rediscovered, online")
    func deviceObjectRemoved() async throws {
        try await Harness.with { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            try await harness.simControl("RemoveDeviceObject", Demo.heartRateAddress)
            try await harness.waitForBridgeLog(from: log, "the removal") {
                $0.contains("BlueZ dropped device \(Demo.heartRateAddress) from its tree")
            }
            try await harness.expectRecovery(of: Demo.heartRate, after: mark, topics: Self.topics(Demo.heartRate))
            #expect(try await harness.simStats().flag(Demo.heartRateAddress, "exported"), "a new device object")
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    // MARK: - 5. StartDiscovery fails with InProgress; a stalled scan

    /// Devices named by address: the scan stops once all are connected, and runs again when a
    /// device object vanishes (no state file: only the scan can find it again).
    static func byAddressOptions(scanWatchdog: String = "2s") -> HarnessOptions {
        var options = HarnessOptions()
        options.config = { port in FaultConfig.byAddress(port: port, scanWatchdog: scanWatchdog) }
        return options
    }

    @Test("5. StartDiscovery fails with InProgress: stop and retry; the scan finds the device again")
    func startDiscoveryInProgress() async throws {
        try await Harness.with(Self.byAddressOptions()) { harness in
            let mark = try await Self.settle(harness)
            try await harness.waitForBridgeLog("the scan stopping with every device connected") {
                $0.contains("every wanted peripheral is connected: stopping the scan")
            }
            let log = harness.bridgeLog.utf8.count
            let before = try await harness.simStats()
            try await harness.simControl("FailNextStartDiscovery", "org.bluez.Error.InProgress", "Operation already in progress")
            try await harness.simControl("RemoveDeviceObject", Demo.heartRateAddress)
            try await harness.waitForBridgeLog(from: log, "the InProgress answer and the retry") {
                $0.contains("StartDiscovery: InProgress; stopping the scan and retrying")
            }
            try await harness.expectRecovery(of: Demo.heartRate, after: mark, topics: Self.topics(Demo.heartRate))
            let after = try await harness.simStats()
            #expect(
                JSON.integer(after.raw["discovery_start_failures"]) ?? 0
                    > JSON.integer(before.raw["discovery_start_failures"]) ?? 0, "the injected failure was hit")
            // Every device connected again: the scan stops again (SPEC §5).
            try await harness.waitForBridgeLog(from: log, "the scan stopping again") {
                $0.contains("every wanted peripheral is connected: stopping the scan")
            }
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    @Test("5. a stalled scan while a device is missing: the watchdog (2 s) restarts it, the device is found")
    func stalledDiscovery() async throws {
        try await Harness.with(Self.byAddressOptions(scanWatchdog: "2s")) { harness in
            let mark = try await Self.settle(harness)
            try await harness.waitForBridgeLog("the scan stopping with every device connected") {
                $0.contains("every wanted peripheral is connected: stopping the scan")
            }
            let log = harness.bridgeLog.utf8.count
            // Not discovering now: the next scan starts stalled (Discovering=true, no results).
            try await harness.simControl("StallDiscovery")
            try await harness.simControl("RemoveDeviceObject", Demo.heartRateAddress)
            try await harness.waitForBridgeLog(from: log, timeout: .seconds(20), "the watchdog restarting the scan") {
                $0.contains("scan watchdog: no advertisement")
            }
            try await harness.expectRecovery(of: Demo.heartRate, after: mark, topics: Self.topics(Demo.heartRate))
            #expect(JSON.bool(try await harness.simStats().adapter()["stalled"]) == false, "the stall was cleared")
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    // MARK: - 6. bluetoothd goes away and comes back

    @Test("6. bluetoothd restarts (org.bluez leaves and comes back): state rebuilt, everything reconnected")
    func bluetoothdRestart() async throws {
        let state = try FaultPaths.temporaryDirectory()
        defer { FaultPaths.remove(state) }
        var options = HarnessOptions()
        // Like /var/lib/bluetooth: the restarted simulator remembers the devices it had connected.
        options.simulatorArguments = ["--state-dir", state, "--append-logs"]
        try await Harness.with(options) { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            try await harness.restartSimulator(down: .seconds(1))
            try await harness.waitForBridgeLog(from: log, "org.bluez leaving") {
                $0.contains("org.bluez left the D-Bus")
            }
            try await harness.waitForBridgeLog(from: log, "BlueZ coming back") { $0.contains("BlueZ is on the D-Bus") }
            for segment in Demo.connectedSegments {
                try await harness.expectRecovery(of: segment, after: mark, topics: Self.topics(segment))
            }
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    // MARK: - 7. The adapter is powered off and on, removed and re-added

    @Test("7. adapter powered off and on: everything offline, then online again")
    func adapterPowerCycle() async throws {
        try await Harness.with { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            try await harness.simControl("SetPowered", "false")
            try await harness.waitForBridgeLog(from: log, "the power off") { $0.contains("adapter hci0 powered off") }
            for segment in Demo.connectedSegments {
                try await harness.waitFor("ble/\(segment)/availability", after: mark) { $0.payload == "offline" }
            }
            // The bridge may power it on itself (it is allowed to); the user does too.
            try await harness.simControl("SetPowered", "true")
            try await harness.waitForBridgeLog(from: log, "the adapter powered again") {
                $0.contains("adapter hci0 powered on") || ($0.contains("adapter hci0 (") && $0.contains("is powered"))
            }
            for segment in Demo.connectedSegments {
                try await harness.expectRecovery(of: segment, after: mark, topics: Self.topics(segment))
            }
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    @Test("7. adapter removed and re-added: everything offline, then online again")
    func adapterRemovedAndAdded() async throws {
        try await Harness.with { harness in
            let mark = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            try await harness.simControl("RemoveAdapter")
            try await harness.waitForBridgeLog(from: log, "the removal") { $0.contains("adapter hci0 was removed") }
            for segment in Demo.connectedSegments {
                try await harness.waitFor("ble/\(segment)/availability", after: mark) { $0.payload == "offline" }
            }
            let removed = harness.bridgeLog.utf8.count
            try await harness.simControl("AddAdapter")
            try await harness.waitForBridgeLog(from: removed, "the adapter back") {
                $0.contains("adapter hci0 (") && $0.contains("is powered")
            }
            for segment in Demo.connectedSegments {
                try await harness.expectRecovery(of: segment, after: mark, topics: Self.topics(segment))
            }
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    // MARK: - 8. The broker goes away and comes back

    @Test("8. broker away 5 s: BLE kept, latest values held and published, retained state and commands back")
    func brokerOutage() async throws {
        try await Harness.with { harness in
            _ = try await Self.settle(harness)
            let log = harness.bridgeLog.utf8.count
            let before = try await harness.simStats()
            try await harness.restartBroker(down: .seconds(5)) {
                try await harness.waitForBridgeLog(from: log, "the lost broker connection") {
                    $0.contains("[MQTT]") && ($0.contains("lost") || $0.contains("failed"))
                }
            }
            let back = harness.observer.count
            // The bridge reports what it held and what newer values replaced (2a37 notifies at 1 Hz).
            let line = try await harness.waitForBridgeLog(from: log, timeout: .seconds(30), "the held values") {
                $0.contains("broker back: published")
            }
            let numbers = line.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            let held = line.range(of: "published ").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
            #expect((held ?? 0) >= 1, "held values published: \(line)")
            #expect(line.contains("replaced by newer ones"), "\(line) \(numbers)")
            // Values flow again, and the retained state is back on the restarted broker.
            for segment in [Demo.heartRate, Demo.environment] {
                try await harness.waitFor("ble/\(segment)/+/+", after: back)
            }
            let state = try await harness.retained("ble/bridge/state")
            #expect(state.retained && state.payload == "online", "\(state)")
            for segment in Demo.connectedSegments {
                let availability = try await harness.retained("ble/\(segment)/availability")
                #expect(availability.retained && availability.payload == "online", "\(availability)")
            }
            let devices = try await harness.retained("ble/bridge/devices")
            #expect(devices.retained && JSON.array(devices.payload) != nil, "\(devices)")
            // Command topics are subscribed again: a /get works.
            let mark = harness.observer.count
            try await harness.publish("ble/\(Demo.heartRate)/180d/2a38/get", #"{"transaction": "after-outage"}"#)
            let result = try await harness.waitFor("ble/\(Demo.heartRate)/180d/2a38/result", after: mark) { _ in true }
            #expect(result.object?["status"] as? String == "ok", "\(result)")
            #expect(result.object?["transaction"] as? String == "after-outage", "\(result)")
            // The BLE links stayed up the whole time.
            let after = try await harness.simStats()
            for address in FaultConfig.connectedAddresses {
                #expect(after.count(address, "disconnects") == before.count(address, "disconnects"), "\(address) disconnected")
                #expect(after.count(address, "connects") == before.count(address, "connects"), "\(address) reconnected")
            }
            #expect(harness.runningBridge.isRunning)
            try await harness.expectNoDuplicateSubscriptionsOrLeaks(connected: FaultConfig.connectedAddresses)
        }
    }

    // MARK: - 9. SIGTERM in the middle of all this

    @Test("9. SIGTERM during a fault storm: clean exit (status 0) within 5 s, offline retained")
    func sigtermDuringFaultStorm() async throws {
        try await Harness.with { harness in
            _ = try await Self.settle(harness)
            // A storm: links dropped, connections failing or hanging, a device away, a stalled
            // scan, a read that hangs.
            try await harness.simControl("SetResolveBehaviour", Demo.heartRateAddress, "never-resolve")
            try await harness.simControl(
                "FailNextConnect", Demo.environmentAddress, "org.bluez.Error.Failed", "le-connection-abort-by-local", "5")
            try await harness.simControl("SetCharacteristicDelay", Demo.echoAddress, Demo.echoWrite, "read", "20000")
            try await harness.simControl("StallDiscovery")
            try await harness.simControl("DropConnection", Demo.heartRateAddress)
            try await harness.simControl("DropConnection", Demo.environmentAddress)
            try await harness.simControl("DropConnection", Demo.echoAddress)
            try await harness.simControl("SetInRange", Demo.otherAddress, "false")
            // In the middle of the reconnections.
            try await harness.waitForBridgeLog("a reconnection in progress") {
                $0.contains("connecting to \(Demo.heartRateAddress)") || $0.contains("connecting to \(Demo.environmentAddress)")
            }
            let mark = harness.observer.count
            let sent = ContinuousClock.now
            harness.runningBridge.send(SIGTERM)
            let termination = await harness.runningBridge.waitForExit(timeout: .seconds(5))
            let took = ContinuousClock.now - sent
            #expect(termination == .exited(0), "ended with \(termination.map(\.description) ?? "nothing within 5 s")\n\(harness.context())")
            #expect(took < .seconds(5), "exit took \(took)")
            try await harness.waitFor("ble/bridge/state", after: mark, timeout: .seconds(5)) { $0.payload == "offline" }
            try await harness.waitForBridgeLog("the shutdown") { $0.contains("shutting down") }
        }
    }
}
