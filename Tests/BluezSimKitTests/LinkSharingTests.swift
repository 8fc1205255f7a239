import BridgeBase
import DBusKit
import Foundation
import Testing

@testable import BluezSimKit

/// A peripheral takes one link at a time: across the adapters of one simulator, and across
/// simulators sharing a link directory (`--link-dir`), also when one of them is killed.
@Suite(.serialized) struct LinkSharingTests {
    static let lock = "C0:00:00:00:00:01"
    static let beacon = "C0:00:00:00:00:02"
    static let notAnswering = DBusError("org.bluez.Error.Failed", "le-connection-abort-by-local")

    /// One adapter; a known lock (exported at start, so Connect needs no discovery) that stops
    /// advertising while linked, and a beacon that always advertises (the test's clock).
    static let scenario = """
        settings: { advertise_delay: 10ms, advertise_jitter: 0ms, rssi_interval: 40ms, connect_delay: 20ms,
                    resolve_delay: 20ms, resolve_delay_cached: 10ms, gatt_objects_first: true, gatt_export_time: 0ms,
                    disconnect_delay: 20ms, connect_timeout: 600ms }
        devices:
          - { name: Lock, address: "C0:00:00:00:00:01", known: true, advertise_while_connected: false }
          - { name: Beacon, address: "C0:00:00:00:00:02" }
        """

    /// The same on two adapters, the lock heard by both.
    static let twoAdapters = """
        settings: { connect_delay: 20ms, disconnect_delay: 20ms, connect_timeout: 600ms }
        adapters: [{ name: hci0 }, { name: hci1 }]
        devices:
          - { name: Lock, address: "C0:00:00:00:00:01", known: true, rssi: { hci0: -60, hci1: -70 } }
        """

    static func linkDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("bluezsim-links-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func options(_ dir: String) -> SimulatorOptions {
        var o = SimulatorOptions()
        o.linkDirectory = dir
        return o
    }

    @Test("two adapters of one simulator: the second Connect fails like a silent peripheral, and succeeds once the first link is gone")
    func oneLinkAcrossAdapters() async throws {
        try await SimHarness.run(Self.twoAdapters) { h in
            let at0 = h.devicePath(Self.lock), at1 = h.devicePath(Self.lock, adapter: "hci1")
            try await h.call(at0, BlueZNames.device, "Connect")
            let started = ContinuousClock.now
            await #expect(throws: Self.notAnswering) { try await h.call(at1, BlueZNames.device, "Connect") }
            #expect(ContinuousClock.now - started >= .milliseconds(550), "fails at the connect timeout")
            #expect(try await h.property(at1, BlueZNames.device, "Connected") == .bool(false))
            let all = await h.simulator.statistics()
            #expect(adapterStat(all, "hci1", "link_conflicts")?.int == 1)
            #expect(adapterStat(all, "hci1", "connect_failures")?.int == 1)
            #expect(adapterStat(all, "hci0", "links") == .stringArray([Self.lock]))
            try await h.call(at0, BlueZNames.device, "Disconnect")
            try await h.call(at1, BlueZNames.device, "Connect")
            #expect(try await h.property(at1, BlueZNames.device, "Connected") == .bool(true))
            #expect(await h.simulator.statistics()["links"]?.stringDict?[Self.lock]?.string == "hci1")
        }
    }

    @Test("two simulators sharing a link directory: one link at a time; a pending Connect succeeds when the other link ends in time")
    func twoSimulatorsShareLinks() async throws {
        let dir = try Self.linkDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await SimHarness.run(Self.scenario, options: Self.options(dir), control: true) { first in
            try await SimHarness.run(Self.scenario, options: Self.options(dir)) { second in
                let path = first.devicePath(Self.lock)
                try await first.call(path, BlueZNames.device, "Connect")
                await #expect(throws: Self.notAnswering) { try await second.call(path, BlueZNames.device, "Connect") }
                #expect(await second.counter(Self.lock, "link_conflicts") == 1)
                // The lock file names the holder.
                let holder = try String(contentsOfFile: "\(dir)/dev_C0_00_00_00_00_01.lock", encoding: .utf8)
                #expect(holder == "\(ProcessInfo.processInfo.processIdentifier) hci0\n")
                try await first.call(path, BlueZNames.device, "Disconnect")
                try await second.call(path, BlueZNames.device, "Connect")
                #expect(try await second.property(path, BlueZNames.device, "Connected") == .bool(true))
                await #expect(throws: Self.notAnswering) { try await first.call(path, BlueZNames.device, "Connect") }
                // A Connect waiting for the peripheral gets it when the other simulator's host goes away.
                async let pending = first.call(path, BlueZNames.device, "Connect")
                try await eventually("the first simulator waits for the peripheral") {
                    await first.counter(Self.lock, "link_conflicts") == 2
                }
                await second.simulator.dropAllConnections()
                _ = try await pending
                #expect(try await first.property(path, BlueZNames.device, "Connected") == .bool(true))
                #expect(try await second.property(path, BlueZNames.device, "Connected") == .bool(false))
                #expect(await second.counter(Self.lock, "link_losses") == 1)
            }
        }
    }

    @Test("a peripheral with advertise_while_connected: false is silent to the other simulator while linked")
    func linkedPeripheralStopsAdvertising() async throws {
        let dir = try Self.linkDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try await SimHarness.run(Self.scenario, options: Self.options(dir)) { first in
            try await SimHarness.run(Self.scenario, options: Self.options(dir)) { second in
                let lock = second.devicePath(Self.lock), beacon = second.devicePath(Self.beacon)
                let lockRecorder = PropertyRecorder(second.client, path: lock)
                let beaconRecorder = PropertyRecorder(second.client, path: beacon)
                try await second.call(BlueZNames.adapterPath("hci0"), BlueZNames.adapter, "StartDiscovery")
                try await eventually("the lock advertises") { lockRecorder.values("RSSI").count >= 2 }
                try await first.call(first.devicePath(Self.lock), BlueZNames.device, "Connect")
                // One advertisement may have been on its way; after that, none while the link is up.
                let mark = lockRecorder.values("RSSI").count
                let beaconMark = beaconRecorder.values("RSSI").count
                try await eventually("beacon advertisements") { beaconRecorder.values("RSSI").count >= beaconMark + 6 }
                #expect(lockRecorder.values("RSSI").count <= mark + 1)
                try await first.call(first.devicePath(Self.lock), BlueZNames.device, "Disconnect")
                try await eventually("the lock advertises again") { lockRecorder.values("RSSI").count >= mark + 3 }
            }
        }
    }

    @Test("a killed bluez-sim process releases its links")
    func killedSimulatorReleasesLinks() async throws {
        let dir = try Self.linkDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bus = try PrivateBus()
        let scenarioPath = "\(dir)/scenario.yaml"
        try Self.scenario.write(toFile: scenarioPath, atomically: true, encoding: .utf8)
        try #require(FileManager.default.isExecutableFile(atPath: Self.binary), "no bluez-sim at \(Self.binary)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["--scenario", scenarioPath, "--bus", bus.address, "--link-dir", dir, "--log-level", "warning"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        let reader = out.fileHandleForReading
        let ready = await offThePool { String(decoding: reader.readData(ofLength: 16), as: UTF8.self) }
        #expect(ready.hasPrefix("bluez-sim ready"), "printed \(ready)")
        let client = try DBusConnection.connect(address: bus.address, logger: SimHarness.logger)
        defer { client.close() }
        let path = BlueZNames.devicePath(adapter: BlueZNames.adapterPath("hci0"), address: Self.lock)
        _ = try await client.call(destination: BlueZNames.service, path: path, interface: BlueZNames.device,
                                  method: "Connect", timeout: .seconds(10))
        try await SimHarness.run(Self.scenario, options: Self.options(dir)) { h in
            await #expect(throws: Self.notAnswering) { try await h.call(path, BlueZNames.device, "Connect") }
            kill(process.processIdentifier, SIGKILL)
            let child = UncheckedProcess(process)
            await offThePool { child.process.waitUntilExit() }
            try await h.call(path, BlueZNames.device, "Connect")
            #expect(try await h.property(path, BlueZNames.device, "Connected") == .bool(true))
        }
    }

    /// The `bluez-sim` of this build, found as the integration tests find their executables
    /// (Tests/IntegrationTests/Harness/Paths.swift): in `$INTEGRATION_BIN_DIR`, else next to the running test
    /// bundle. The test target depends on `bluez-sim`, so `swift build --build-tests` and `swift test` build it
    /// there, whatever the configuration or `--scratch-path`.
    static let binary: String = {
        if let directory = ProcessInfo.processInfo.environment["INTEGRATION_BIN_DIR"], !directory.isEmpty {
            return "\(directory)/bluez-sim"
        }
        let bundle = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "/proc/self/exe"
        return "\((bundle as NSString).deletingLastPathComponent)/bluez-sim"
    }()
}

/// A `Process` handed to ``offThePool(_:)`` (only `waitUntilExit` runs there).
private struct UncheckedProcess: @unchecked Sendable {
    let process: Process
    init(_ process: Process) { self.process = process }
}
