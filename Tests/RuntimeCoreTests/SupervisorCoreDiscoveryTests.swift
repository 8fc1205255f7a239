import BridgeCore
import Testing

@testable import RuntimeCore

/// ``SupervisorCore``'s scan: `InProgress`, stored peripherals first, stopping when nothing is
/// missing, and the scan watchdog.
@Suite struct SupervisorCoreDiscoveryTests {
    typealias F = CoreFixture
    static let inProgress = BluetoothError(code: .inProgress, name: "org.bluez.Error.InProgress", message: "Operation already in progress")
    static let scan = SupervisorCore.Action.startDiscovery(uuids: [], duplicateData: false)

    @Test("StartDiscovery InProgress while not discovering: stop the scan, retry a second later")
    func inProgressStopsAndRetries() throws {
        var core = SupervisorCore(config: try F.config("devices: [{ match: { address: \"\(F.thermo)\" } }]"), now: F.at(0))
        #expect(core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter())).decisions == [Self.scan])
        let idle = F.tree(F.adapter(discovering: false))
        #expect(core.handle(.discoveryFinished(error: Self.inProgress), now: F.at(100), tree: idle).decisions == [.stopDiscovery])
        #expect(core.nextDeadline == F.at(1100))
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(1099), tree: idle).decisions == [])
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(1100), tree: idle).decisions == [Self.scan])
        #expect(core.handle(.discoveryFinished(error: nil), now: F.at(1200), tree: F.scanningTree).decisions == [])
        #expect(core.discovery.ours)
    }

    @Test("StartDiscovery InProgress while discovering: the running scan is kept")
    func inProgressWhileDiscovering() throws {
        var core = SupervisorCore(config: try F.config("devices: [{ match: { address: \"\(F.thermo)\" } }]"), now: F.at(0))
        _ = core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter()))
        #expect(core.handle(.discoveryFinished(error: Self.inProgress), now: F.at(100), tree: F.scanningTree).decisions == [])
        #expect(core.discovery.ours && core.discovery.retryAt == nil)
    }

    @Test("another StartDiscovery failure: retried 5 s later")
    func failureRetries() throws {
        var core = SupervisorCore(config: try F.config("devices: [{ match: { address: \"\(F.thermo)\" } }]"), now: F.at(0))
        _ = core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter()))
        let failed = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "no")
        #expect(core.handle(.discoveryFinished(error: failed), now: F.at(100), tree: F.tree(F.adapter())).decisions == [])
        #expect(core.nextDeadline == F.at(5100))
    }

    @Test("a stored peripheral BlueZ knows is connected first; the scan waits until its Connect returned")
    func storedHoldsScanUntilConnectReturned() throws {
        var core = SupervisorCore(config: try F.config("state_file: /nonexistent/peripherals.json"), now: F.at(0))
        _ = core.handle(.started(stored: [KnownPeripheral(address: F.thermo, addressType: "public")]), now: F.at(0), tree: F.noBlueZ)
        let thermo = F.device(F.thermo)
        let actions = core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter(), devices: [thermo]))
        #expect(actions.plans.map(\.connectNow) == [true])
        #expect(actions.decisions.count == 2, "only the session and the device list: \(actions.decisions)")
        #expect(core.nextDeadline == F.at(2000))
        // Other inputs do not start the scan while the Connect is pending.
        #expect(core.handle(.availability(path: thermo.path, false), now: F.at(500), tree: F.tree(F.adapter())).decisions.contains(Self.scan) == false)
        #expect(core.handle(.connectReturned(path: thermo.path), now: F.at(800), tree: F.tree(F.adapter())).decisions == [Self.scan])
        #expect(core.discovery.heldUntil == nil)
    }

    @Test("a stored peripheral BlueZ does not know: ConnectDevice first, the scan after it returned")
    func storedConnectDevice() throws {
        var core = SupervisorCore(config: try F.config("state_file: /nonexistent/peripherals.json"), now: F.at(0))
        _ = core.handle(.started(stored: [KnownPeripheral(address: F.thermo, addressType: "random")]), now: F.at(0), tree: F.noBlueZ)
        let path = F.path(F.thermo)
        #expect(
            core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter())).decisions
                == [.connectDevice(address: F.thermo, addressType: "random", path: path)])
        #expect(core.handle(.storedConnectReturned(path: path), now: F.at(300), tree: F.tree(F.adapter())).decisions == [Self.scan])
    }

    @Test("a stored peripheral's Connect that hangs holds the scan for the head start only")
    func storedHeadStart() throws {
        var core = SupervisorCore(config: try F.config("state_file: /nonexistent/peripherals.json"), now: F.at(0))
        _ = core.handle(.started(stored: [KnownPeripheral(address: F.thermo, addressType: "public")]), now: F.at(0), tree: F.noBlueZ)
        _ = core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter(), devices: [F.device(F.thermo)]))
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(1999), tree: F.tree(F.adapter())).decisions == [])
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(2000), tree: F.tree(F.adapter())).decisions == [Self.scan])
        // The late return changes nothing.
        #expect(core.handle(.connectReturned(path: F.path(F.thermo)), now: F.at(2500), tree: F.scanningTree).decisions == [])
    }

    @Test("a stored advertisement device sends no Connect: the scan is not held for it")
    func storedAdvertiserDoesNotHold() throws {
        let yaml = """
            state_file: /nonexistent/peripherals.json
            devices: [{ match: { address: "\(F.thermo)" }, connection: advertisement }]
            """
        var core = SupervisorCore(config: try F.config(yaml), now: F.at(0))
        _ = core.handle(.started(stored: [KnownPeripheral(address: F.thermo, addressType: "public")]), now: F.at(0), tree: F.noBlueZ)
        let actions = core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter(), devices: [F.device(F.thermo)]))
        #expect(actions.plans.map(\.policy.name) == ["advertisement"])
        #expect(actions.decisions.last == .startDiscovery(uuids: [], duplicateData: true))
        #expect(core.discovery.heldFor.isEmpty && core.discovery.heldUntil == nil)
    }

    @Test("every wanted peripheral online: the scan stops; one going offline starts it again")
    func scanStopsWhenNothingMissing() throws {
        var core = try F.scanning("devices: [{ match: { address: \"\(F.thermo)\" } }]")
        let thermo = F.device(F.thermo)
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(1000), tree: F.tree(devices: [thermo]))
        let online = core.handle(.availability(path: thermo.path, true), now: F.at(2000), tree: F.scanningTree)
        #expect(online.decisions.last == .stopDiscovery)
        #expect(online.logs.contains("every wanted peripheral is connected: stopping the scan"))
        #expect(!core.discovery.ours)
        let idle = F.tree(F.adapter(discovering: false))
        #expect(core.handle(.availability(path: thermo.path, false), now: F.at(3000), tree: idle).decisions.last == Self.scan)
    }

    @Test("a scan stopped behind the bridge's back is restarted a second later while a peripheral is missing")
    func stoppedBehindOurBack() throws {
        var core = try F.scanning("devices: [{ match: { address: \"\(F.thermo)\" } }]")
        let idle = F.tree(F.adapter(discovering: false))
        #expect(core.handle(.adapterChanged(["Discovering"]), now: F.at(1000), tree: idle).decisions == [])
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(2000), tree: idle).decisions == [Self.scan])
    }

    // MARK: Scan watchdog

    static let watched = """
        bluetooth: { scan_watchdog: 8s }
        devices: [{ match: { address: "\(CoreFixture.thermo)" } }]
        """

    /// Ticks at every deadline up to `end`; the restarts of the scan, by time.
    /// `heard`: the advertisement router's last advertisement at a tick's time.
    static func restarts(
        _ core: inout SupervisorCore, until end: Int64, heard: (BridgeInstant) -> BridgeInstant? = { _ in nil }
    ) -> [BridgeInstant] {
        var out: [BridgeInstant] = []
        while let at = core.nextDeadline, at <= F.at(end) {
            let actions = core.handle(.tick(lastAdvertisement: heard(at)), now: at, tree: F.scanningTree)
            if actions.decisions.contains(.restartDiscovery) {
                out.append(at)
                _ = core.handle(.discoveryFinished(error: nil), now: at, tree: F.scanningTree)
            }
        }
        return out
    }

    @Test("the watchdog restarts a silent scan only after scan_watchdog without an advertisement while a peripheral is missing")
    func watchdogFiresAfterSilence() throws {
        var core = try F.scanning(Self.watched)
        // Checked every quarter period from the adapter's start: 2, 4, 6, 8 s: not yet silent
        // for more than 8 s (the scan started at 0.1 s); 10 s: it is.
        #expect(core.nextDeadline == F.at(2000))
        #expect(Self.restarts(&core, until: 8000) == [])
        let at10 = core.handle(.tick(lastAdvertisement: nil), now: F.at(10_000), tree: F.scanningTree)
        #expect(at10.decisions == [.restartDiscovery])
        #expect(at10.logs == ["scan watchdog: no advertisement for 8.0 seconds while peripherals are missing; restarting the scan"])
        // Restarting measures the silence from then: the next restart 10 s later.
        _ = core.handle(.discoveryFinished(error: nil), now: F.at(10_100), tree: F.scanningTree)
        #expect(Self.restarts(&core, until: 30_000) == [F.at(20_000), F.at(30_000)])
    }

    @Test("advertisements (a device's RSSI, or the advertisement router's) keep the watchdog quiet")
    func watchdogQuietWithAdvertisements() throws {
        var core = try F.scanning(Self.watched)
        let other = F.device("E4:5F:01:00:00:02")
        _ = core.handle(.deviceChanged(path: other.path, ["RSSI"]), now: F.at(5000), tree: F.scanningTree)
        #expect(Self.restarts(&core, until: 12_000) == [])
        #expect(Self.restarts(&core, until: 14_000) == [F.at(14_000)])
        var heard = try F.scanning(Self.watched)
        // The router heard an advertisement a second before every check.
        #expect(Self.restarts(&heard, until: 60_000, heard: { $0.advanced(by: .seconds(-1)) }) == [])
    }

    @Test("the watchdog does nothing while no peripheral is missing")
    func watchdogQuietWhenNothingMissing() throws {
        // A name pattern keeps the scan running; the one device it matches is online.
        var core = try F.scanning("bluetooth: { scan_watchdog: 8s }\ndevices: [{ match: { name: \"Thermo\" } }]")
        let thermo = F.device(F.thermo, name: "Thermo")
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(500), tree: F.tree(devices: [thermo]))
        _ = core.handle(.availability(path: thermo.path, true), now: F.at(600), tree: F.scanningTree)
        #expect(core.discovery.ours)
        #expect(Self.restarts(&core, until: 60_000) == [])
        _ = core.handle(.availability(path: thermo.path, false), now: F.at(60_500), tree: F.scanningTree)
        #expect(Self.restarts(&core, until: 62_000) == [F.at(62_000)])
    }

    @Test("without scan_watchdog (nil) there is no watchdog at all")
    func watchdogDisabled() throws {
        var config = try F.config("devices: [{ match: { address: \"\(F.thermo)\" } }]")
        config.bluetooth.scanWatchdog = nil
        var core = SupervisorCore(config: config, now: F.at(0))
        _ = core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter()))
        _ = core.handle(.discoveryFinished(error: nil), now: F.at(100), tree: F.scanningTree)
        #expect(core.discovery.ours)
        #expect(core.nextDeadline == nil, "no timer without a watchdog")
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(3_600_000), tree: F.scanningTree).decisions == [])
    }
}
