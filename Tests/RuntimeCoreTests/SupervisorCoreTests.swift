import BridgeCore
import ConfigLoader
import Testing

@testable import RuntimeCore

/// ``SupervisorCore`` driven directly: inputs with an explicit time and tree data, the exact
/// actions asserted (log lines left out); no task, no clock, no fake.
@Suite struct SupervisorCoreTests {
    typealias F = CoreFixture

    @Test("an unpowered adapter is powered on once; once it is powered, the scan starts")
    func powerOnThenScan() throws {
        var core = SupervisorCore(config: try F.config("bluetooth: { services: [\"180f\"] }"), now: F.at(0))
        _ = core.handle(.started(stored: []), now: F.at(0), tree: F.noBlueZ)
        let off = F.tree(F.adapter(powered: false))
        #expect(core.handle(.bluezAvailable, now: F.at(0), tree: off).decisions == [.powerOn])
        // Still off (another check while the call runs): no second call.
        #expect(core.handle(.adapterAdded, now: F.at(10), tree: off).decisions == [])
        #expect(core.handle(.powerFinished(error: nil), now: F.at(20), tree: off).decisions == [])
        #expect(!core.adapterReady)
        let on = F.tree(F.adapter(powered: true))
        #expect(
            core.handle(.adapterChanged(["Powered"]), now: F.at(30), tree: on).decisions
                == [.startDiscovery(uuids: ["0000180f-0000-1000-8000-00805f9b34fb"], duplicateData: false)])
        #expect(core.adapterReady)
        // The scan started: the same change again starts nothing.
        #expect(core.handle(.adapterChanged(["Powered"]), now: F.at(40), tree: on).decisions == [])
    }

    @Test("pairing agent: registered each time BlueZ appears (a restarted bluetoothd forgot it), not with agent: false")
    func pairingAgent() throws {
        var core = SupervisorCore(config: try F.config(""), now: F.at(0))
        #expect(core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter())).contains(.registerAgent))
        _ = core.handle(.bluezLost, now: F.at(10), tree: F.noBlueZ)
        #expect(core.handle(.bluezAvailable, now: F.at(20), tree: F.tree(F.adapter())).contains(.registerAgent))
        var off = SupervisorCore(config: try F.config("bluetooth: { agent: false }"), now: F.at(0))
        #expect(!off.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter())).contains(.registerAgent))
    }

    @Test("a missing adapter is waited for; its appearance brings the scan")
    func missingAdapter() throws {
        var core = SupervisorCore(config: try F.config("bluetooth: { services: [\"180f\"] }"), now: F.at(0))
        let actions = core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(nil, adapters: ["/org/bluez/hci1"]))
        #expect(actions.decisions == [])
        #expect(actions.logs.contains { $0.contains("not found; BlueZ has: /org/bluez/hci1") }, "\(actions.logs)")
        #expect(
            core.handle(.adapterAdded, now: F.at(10), tree: F.tree(F.adapter())).decisions
                == [.startDiscovery(uuids: ["0000180f-0000-1000-8000-00805f9b34fb"], duplicateData: false)])
    }

    @Test("a device that advertises a wanted service gets a session; one that does not, none")
    func wantedDeviceGetsSession() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        let other = F.device("E4:5F:01:00:00:02", uuids: ["180d"])
        #expect(core.handle(.deviceAdded(path: other.path), now: F.at(1000), tree: F.tree(devices: [other])).decisions == [])
        let thermo = F.device(F.thermo, name: "Thermo", uuids: ["180f"])
        let actions = core.handle(.deviceAdded(path: thermo.path), now: F.at(1100), tree: F.tree(devices: [thermo]))
        let plan = SupervisorCore.SessionPlan(
            path: thermo.path, address: thermo.address, addressType: "public", segment: "e45f01abcdef", config: nil,
            connectNow: false, seed: actions.plans.first?.seed ?? 0, policy: .always)
        #expect(actions.decisions == [.startSession(plan), listed])
        #expect(core.sessions == [thermo.path])
        // Found again (a property change): no second session.
        #expect(core.handle(.deviceChanged(path: thermo.path, ["UUIDs"]), now: F.at(1200), tree: F.tree(devices: [thermo])).decisions == [])
    }

    @Test("the sessions' reports are recorded in the registry: link, availability, services")
    func reportsRecorded() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        let thermo = F.device(F.thermo, uuids: ["180f"])
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(1000), tree: F.tree(devices: [thermo]))
        var record = DeviceRecord(
            path: thermo.path, segment: "e45f01abcdef", address: thermo.address, addressType: "public", policy: .always)
        record.connected = true
        record.connects = 1
        #expect(
            core.handle(.linkChanged(path: thermo.path, connected: true), now: F.at(1100), tree: F.scanningTree).decisions
                == [.record(record), listed])
        record.available = true
        #expect(
            core.handle(.availability(path: thermo.path, true), now: F.at(1200), tree: F.scanningTree).decisions
                == [.record(record), listed])
        let mapped = MappedDevice(
            characteristics: ["battery/level": "00002a19-0000-1000-8000-00805f9b34fb"],
            services: ["0000180f-0000-1000-8000-00805f9b34fb"], serviceSegments: ["battery"], discovery: [], name: nil,
            information: DeviceInformation())
        record.services = ["battery"]
        #expect(
            core.handle(.mapped(path: thermo.path, mapped), now: F.at(1300), tree: F.scanningTree).decisions
                == [.record(record), .remember(address: F.thermo, addressType: "public", mapped), listed])
        record.connected = false
        #expect(
            core.handle(.linkChanged(path: thermo.path, connected: false), now: F.at(1400), tree: F.scanningTree).decisions
                == [.record(record), listed])
        record.connected = true
        record.connects = 2
        #expect(
            core.handle(.linkChanged(path: thermo.path, connected: true), now: F.at(1500), tree: F.scanningTree).decisions
                == [.record(record), listed])
        #expect(core.devices[thermo.path] == record)
    }

    @Test("a removed device's session is told and ends; its entry goes, offline is published; back in the tree, a new session starts")
    func deviceRemovedEndsSession() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        let thermo = F.device(F.thermo, uuids: ["180f"])
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(1000), tree: F.tree(devices: [thermo]))
        _ = core.handle(.availability(path: thermo.path, true), now: F.at(1100), tree: F.scanningTree)
        #expect(core.handle(.deviceRemoved(path: thermo.path), now: F.at(2000), tree: F.scanningTree).decisions == [.send(path: thermo.path, .deviceRemoved)])
        #expect(
            core.handle(.sessionEnded(path: thermo.path), now: F.at(2100), tree: F.scanningTree).decisions
                == [.unregister(path: thermo.path), .publishAvailability(segment: "e45f01abcdef", online: false), listed])
        #expect(core.sessions.isEmpty && core.devices.isEmpty)
        // Ended while the object came back: a new session at once.
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(3000), tree: F.tree(devices: [thermo]))
        _ = core.handle(.deviceRemoved(path: thermo.path), now: F.at(3100), tree: F.scanningTree)
        let actions = core.handle(.sessionEnded(path: thermo.path), now: F.at(3200), tree: F.tree(devices: [thermo]))
        #expect(actions.decisions.count == 4 && actions.plans.map(\.path) == [thermo.path], "\(actions.decisions)")
    }

    @Test("broker connection: bridge online, every availability, the device list, Home Assistant, held values")
    func brokerConnected() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }\nhomeassistant: { discovery: true }")
        let thermo = F.device(F.thermo, uuids: ["180f"])
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(1000), tree: F.tree(devices: [thermo]))
        #expect(
            core.handle(.brokerConnected, now: F.at(1100), tree: F.scanningTree).decisions == [
                .publishBridgeState(online: true), .publishAvailability(segment: "e45f01abcdef", online: false),
                listed, .homeAssistantRepublish(reason: "connected to the broker", startHold: true), .flushHeldValues,
            ])
        #expect(core.brokerConnections == 1)
    }

    @Test("health is published every health.interval, and never with interval 0 (off)")
    func healthTimer() throws {
        var core = SupervisorCore(config: try F.config("health: { interval: 30s }"), now: F.at(0))
        _ = core.handle(.started(stored: []), now: F.at(0), tree: F.noBlueZ)
        #expect(core.nextDeadline == F.at(30_000))
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(29_999), tree: F.noBlueZ).decisions == [])
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(30_000), tree: F.noBlueZ).decisions == [.publishHealth])
        #expect(core.nextDeadline == F.at(60_000))

        var quiet = SupervisorCore(config: try F.config("health: { interval: 0s }"), now: F.at(0))
        _ = quiet.handle(.started(stored: []), now: F.at(0), tree: F.noBlueZ)
        #expect(quiet.nextDeadline == nil)
        #expect(quiet.handle(.tick(lastAdvertisement: nil), now: F.at(600_000), tree: F.noBlueZ).decisions == [])
    }

    @Test("shutdown: offline, every session stopped, the scan stopped; finished when the last session ended")
    func shutdown() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        let a = F.device(F.thermo, uuids: ["180f"]), b = F.device("E4:5F:01:00:00:02", uuids: ["180f"])
        _ = core.handle(.deviceAdded(path: a.path), now: F.at(1000), tree: F.tree(devices: [a]))
        _ = core.handle(.deviceAdded(path: b.path), now: F.at(1000), tree: F.tree(devices: [b]))
        #expect(
            core.handle(.stop, now: F.at(2000), tree: F.scanningTree).decisions == [
                .publishBridgeState(online: false), .send(path: b.path, .stop), .send(path: a.path, .stop), .stopDiscovery,
            ])
        #expect(core.nextDeadline == F.at(5000))
        // Nothing else is decided while stopping.
        let c = F.device("E4:5F:01:00:00:03", uuids: ["180f"])
        #expect(core.handle(.deviceAdded(path: c.path), now: F.at(2100), tree: F.tree(devices: [c])).decisions == [])
        #expect(core.handle(.brokerConnected, now: F.at(2100), tree: F.scanningTree).decisions == [])
        #expect(core.handle(.sessionEnded(path: a.path), now: F.at(2200), tree: F.scanningTree).decisions == [.unregister(path: a.path)])
        #expect(
            core.handle(.sessionEnded(path: b.path), now: F.at(2300), tree: F.scanningTree).decisions
                == [.unregister(path: b.path), .finishShutdown])
        #expect(core.nextDeadline == nil)
    }

    @Test("shutdown gives up on sessions still running after the stop timeout")
    func shutdownTimeout() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        let a = F.device(F.thermo, uuids: ["180f"])
        _ = core.handle(.deviceAdded(path: a.path), now: F.at(1000), tree: F.tree(devices: [a]))
        _ = core.handle(.stop, now: F.at(2000), tree: F.scanningTree)
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(4999), tree: F.scanningTree).decisions == [])
        let actions = core.handle(.tick(lastAdvertisement: nil), now: F.at(5000), tree: F.scanningTree)
        #expect(actions.decisions == [.finishShutdown])
        #expect(actions.logs == ["1 devices did not disconnect in time; going on"])
        #expect(core.handle(.sessionEnded(path: a.path), now: F.at(5100), tree: F.scanningTree).decisions == [])
    }

    @Test("shutdown without sessions finishes at once")
    func shutdownIdle() throws {
        var core = SupervisorCore(config: try F.config(""), now: F.at(0))
        #expect(core.handle(.stop, now: F.at(0), tree: F.noBlueZ).decisions == [.publishBridgeState(online: false), .finishShutdown])
    }

    @Test("forget: the state file, Home Assistant, the last values, the session, the entry, BlueZ's object")
    func forget() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        let thermo = F.device(F.thermo, uuids: ["180f"])
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(1000), tree: F.tree(devices: [thermo]))
        #expect(core.find("e45f01abcdef")?.path == thermo.path && core.find(F.thermo)?.path == thermo.path)
        #expect(
            core.handle(.request(command: "forget", payload: Array(#"{"device":"e45f01abcdef"}"#.utf8)), now: F.at(2000), tree: F.scanningTree)
                .decisions == [
                    .forgetStored(address: F.thermo), .homeAssistantRemove(path: thermo.path),
                    .forgetLastValues(segment: "e45f01abcdef"), .send(path: thermo.path, .stop), .unregister(path: thermo.path),
                    .publishAvailability(segment: "e45f01abcdef", online: false), listed,
                    .removeDevice(path: thermo.path),
                    .respond(.init(command: "forget", body: .device(name: "e45f01abcdef", address: F.thermo))),
                ])
        #expect(core.find(F.thermo) == nil)
        // The session ends later: the device list went out without it already.
        #expect(core.handle(.sessionEnded(path: thermo.path), now: F.at(2100), tree: F.scanningTree).decisions == [])
    }
}

/// A `bridge/devices` publication, as ``Swift/Array/decisions`` shows it.
let listed = SupervisorCore.Action.sendDevices([])

/// Building blocks of the ``SupervisorCore`` tests.
enum CoreFixture {
    static let thermo = "E4:5F:01:AB:CD:EF"
    static let adapterPath = "/org/bluez/hci0"

    static func config(_ yaml: String) throws -> BridgeConfig {
        try BridgeConfig.parse(
            yaml: "mqtt: { url: \"mqtt://127.0.0.1:1\" }\n" + yaml, fileName: "test.yaml", environment: [:], hostName: "test")
    }

    static func at(_ milliseconds: Int64) -> BridgeInstant { BridgeInstant(offset: .milliseconds(milliseconds)) }

    static func adapter(powered: Bool = true, discovering: Bool = false, offersMonitor: Bool = false) -> SupervisorCore.Tree.Adapter {
        SupervisorCore.Tree.Adapter(powered: powered, discovering: discovering, address: "00:1A:7D:DA:71:13", offersMonitor: offersMonitor)
    }

    static let noBlueZ = SupervisorCore.Tree(bluezAvailable: false, adapter: nil)
    /// A powered adapter, discovering.
    static let scanningTree = tree(adapter(discovering: true))

    static func tree(_ adapter: SupervisorCore.Tree.Adapter? = adapter(discovering: true), devices: [DeviceSnapshot] = [], adapters: [String] = []) -> SupervisorCore.Tree {
        SupervisorCore.Tree(bluezAvailable: true, adapter: adapter, devices: devices, adapters: adapters)
    }

    static func path(_ address: String) -> String { BlueZNames.devicePath(adapter: adapterPath, address: address) }

    /// A device object as BlueZ exports it.
    static func device(_ address: String, name: String? = nil, uuids: [String] = [], connected: Bool = false) -> DeviceSnapshot {
        DeviceSnapshot(
            path: path(address), address: BluetoothAddress(address)!, name: name,
            uuids: uuids.map { BluetoothUUID($0)! }, connected: connected)
    }

    /// A core whose adapter is powered and whose scan runs (started at 0, running at 100 ms).
    static func scanning(_ yaml: String, stored: [KnownPeripheral] = [], devices: [DeviceSnapshot] = []) throws -> SupervisorCore {
        var core = SupervisorCore(config: try config(yaml), now: at(0))
        _ = core.handle(.started(stored: stored), now: at(0), tree: noBlueZ)
        let actions = core.handle(.bluezAvailable, now: at(0), tree: tree(adapter(), devices: devices))
        #expect(actions.decisions.contains { if case .startDiscovery = $0 { true } else { false } }, "\(actions.decisions)")
        _ = core.handle(.discoveryFinished(error: nil), now: at(100), tree: scanningTree)
        #expect(core.discovery.ours)
        return core
    }
}

extension [SupervisorCore.Action] {
    /// The actions without log lines and the pairing agent's registration (at each `bluezAvailable`: the
    /// "pairing agent" test checks it).
    /// The decisions but logs, with every `bridge/devices` payload as `[]` (``listed``: its content has tests of its own).
    var decisions: [SupervisorCore.Action] {
        compactMap {
            switch $0 {
            case .log, .registerAgent: nil
            case .sendDevices: .sendDevices([])
            default: $0
            }
        }
    }
    /// The log lines.
    var logs: [String] { compactMap { if case .log(_, let line) = $0 { line } else { nil } } }
    /// The sessions started.
    var plans: [SupervisorCore.SessionPlan] { compactMap { if case .startSession(let plan) = $0 { plan } else { nil } } }
}
