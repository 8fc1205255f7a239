import BridgeCore
import Testing

@testable import RuntimeCore

/// ``SupervisorCore`` with several adapters (SPEC §10): a scan on each, one session per address on the adapter
/// that hears it best, moves by the switch rule only (the old session ends before the new one starts), an
/// adapter going down moving its devices; inputs with an explicit time and tree, no task, no clock.
@Suite struct SupervisorCoreAdaptersTests {
    typealias F = CoreFixture
    static let lock = "C0:FF:EE:00:00:01"
    static let twoAdapters = "bluetooth: { adapters: [hci0, hci1], services: [\"180f\"] }\ncluster: { switch_margin: 10, switch_after: 30s }"

    static func adapter(_ powered: Bool = true, discovering: Bool = false) -> SupervisorCore.Tree.Adapter {
        SupervisorCore.Tree.Adapter(powered: powered, discovering: discovering, address: nil, offersMonitor: false)
    }

    static func tree(
        hci0: SupervisorCore.Tree.Adapter? = adapter(discovering: true), hci1: SupervisorCore.Tree.Adapter? = adapter(discovering: true),
        devices: [DeviceSnapshot] = [], freeSlots: [String: Int] = [:]
    ) -> SupervisorCore.Tree {
        var adapters: [String: SupervisorCore.Tree.Adapter] = [:]
        adapters["hci0"] = hci0
        adapters["hci1"] = hci1
        return SupervisorCore.Tree(bluezAvailable: true, adapters: adapters, devices: devices, freeSlots: freeSlots)
    }

    /// The object of `address` on `adapter`, heard at `rssi`.
    static func device(_ address: String = lock, on adapter: String, rssi: Int?, connected: Bool = false) -> DeviceSnapshot {
        DeviceSnapshot(
            path: BlueZNames.devicePath(adapterName: adapter, address: address), address: BluetoothAddress(address)!,
            rssi: rssi, uuids: [BluetoothUUID("180f")!], connected: connected)
    }

    /// Both adapters powered, both scanning.
    static func scanning(_ yaml: String = twoAdapters, stored: [KnownPeripheral] = []) throws -> SupervisorCore {
        var core = SupervisorCore(config: try F.config(yaml), now: F.at(0))
        _ = core.handle(.started(stored: stored), now: F.at(0), tree: F.noBlueZ)
        let actions = core.handle(.bluezAvailable, now: F.at(0), tree: tree(hci0: adapter(), hci1: adapter()))
        let uuids = ["0000180f-0000-1000-8000-00805f9b34fb"]
        #expect(actions.decisions == [
            .startDiscovery(adapter: "hci0", uuids: uuids, duplicateData: false),
            .startDiscovery(adapter: "hci1", uuids: uuids, duplicateData: false),
        ])
        _ = core.handle(.discoveryFinished(adapter: "hci0", error: nil), now: F.at(100), tree: tree())
        _ = core.handle(.discoveryFinished(adapter: "hci1", error: nil), now: F.at(100), tree: tree())
        #expect(core.radios["hci0"]?.discovery.ours == true && core.radios["hci1"]?.discovery.ours == true)
        return core
    }

    @Test("every adapter is powered on and scans; an InProgress on one retries that one only")
    func powerAndScanPerAdapter() throws {
        var core = SupervisorCore(config: try F.config(Self.twoAdapters), now: F.at(0))
        let off = Self.tree(hci0: Self.adapter(false), hci1: Self.adapter())
        let first = core.handle(.bluezAvailable, now: F.at(0), tree: off)
        let uuids = ["0000180f-0000-1000-8000-00805f9b34fb"]
        #expect(first.decisions == [.powerOn(adapter: "hci0"), .startDiscovery(adapter: "hci1", uuids: uuids, duplicateData: false)])
        let inProgress = BluetoothError(code: .inProgress, name: "org.bluez.Error.InProgress", message: "busy")
        #expect(
            core.handle(.discoveryFinished(adapter: "hci1", error: inProgress), now: F.at(100), tree: off).decisions
                == [.stopDiscovery(adapter: "hci1")])
        let on = Self.tree(hci0: Self.adapter(), hci1: Self.adapter())
        #expect(
            core.handle(.adapterChanged("hci0", ["Powered"]), now: F.at(200), tree: on).decisions
                == [.startDiscovery(adapter: "hci0", uuids: uuids, duplicateData: false)])
        #expect(core.nextDeadline == F.at(1100))
        #expect(
            core.handle(.tick(lastAdvertisement: nil), now: F.at(1100), tree: on).decisions
                == [.startDiscovery(adapter: "hci1", uuids: uuids, duplicateData: false)])
        // An adapter not in the list is ignored.
        #expect(core.handle(.adapterAdded("hci2"), now: F.at(1200), tree: on).decisions == [])
    }

    @Test("a device heard by both adapters gets one session, through the one that hears it best")
    func oneSessionOnTheBestAdapter() throws {
        var core = try Self.scanning()
        let weak = Self.device(on: "hci0", rssi: -80), strong = Self.device(on: "hci1", rssi: -60)
        // Found by hci0 first, while hci1 hears it better: the session goes to hci1's object.
        let actions = core.handle(.deviceAdded(path: weak.path), now: F.at(1000), tree: Self.tree(devices: [weak, strong]))
        #expect(actions.plans.map(\.path) == [strong.path], "\(actions.decisions)")
        #expect(core.sessions == [strong.path])
        // Found again on either adapter: no second session.
        #expect(core.handle(.deviceAdded(path: strong.path), now: F.at(1100), tree: Self.tree(devices: [weak, strong])).plans.isEmpty)
        #expect(core.handle(.deviceChanged(path: weak.path, ["UUIDs"]), now: F.at(1200), tree: Self.tree(devices: [weak, strong])).plans.isEmpty)
    }

    @Test("a device heard by one adapter only waits placementWindow for the others: the first to hear it does not win by timing")
    func placementWindow() throws {
        var core = try Self.scanning()
        let first = Self.device(on: "hci0", rssi: -90)
        #expect(core.handle(.deviceAdded(path: first.path), now: F.at(1000), tree: Self.tree(devices: [first])).plans.isEmpty)
        #expect(core.nextDeadline == F.at(3000))
        // hci1 hears it better within the window: there it goes.
        let better = Self.device(on: "hci1", rssi: -60)
        let placed = core.handle(.deviceAdded(path: better.path), now: F.at(1500), tree: Self.tree(devices: [first, better]))
        #expect(placed.plans.map(\.path) == [better.path], "\(placed.decisions)")
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(3000), tree: Self.tree(devices: [first, better])).plans.isEmpty)
        // Only hci0 ever hears it: placed there when the window is over.
        var other = try Self.scanning()
        let alone = Self.device(on: "hci0", rssi: -90)
        #expect(other.handle(.deviceAdded(path: alone.path), now: F.at(1000), tree: Self.tree(devices: [alone])).plans.isEmpty)
        #expect(other.pathsNeeded(at: F.at(3000)).contains(alone.path))
        #expect(other.handle(.tick(lastAdvertisement: nil), now: F.at(2999), tree: Self.tree(devices: [alone])).plans.isEmpty)
        #expect(other.handle(.tick(lastAdvertisement: nil), now: F.at(3000), tree: Self.tree(devices: [alone])).plans.map(\.path) == [alone.path])
    }

    @Test("the best adapter without a free slot: the next best that has one")
    func freeSlotWins() throws {
        var core = try Self.scanning()
        let weak = Self.device(on: "hci0", rssi: -80), strong = Self.device(on: "hci1", rssi: -60)
        let full = Self.tree(devices: [weak, strong], freeSlots: ["hci0": 2, "hci1": 0])
        #expect(core.handle(.deviceAdded(path: strong.path), now: F.at(1000), tree: full).plans.map(\.path) == [weak.path])
    }

    @Test("an adapter powered off: its sessions stop, the devices come back through the other; it is left off")
    func poweredOffMovesDevices() throws {
        var core = try Self.scanning()
        let on0 = Self.device(on: "hci0", rssi: -60), on1 = Self.device(on: "hci1", rssi: -80)
        _ = core.handle(.deviceAdded(path: on0.path), now: F.at(1000), tree: Self.tree(devices: [on0, on1]))
        #expect(core.sessions == [on0.path])
        _ = core.handle(.linkChanged(path: on0.path, connected: true), now: F.at(1100), tree: Self.tree())
        let hci0Off = Self.tree(hci0: Self.adapter(false), devices: [on0, on1])
        let off = core.handle(.adapterChanged("hci0", ["Powered"]), now: F.at(2000), tree: hci0Off)
        #expect(off.decisions == [.send(path: on0.path, .stop)], "stopped, and hci0 is not powered on again: \(off.decisions)")
        // Until the session ended, no second one (one link).
        #expect(core.handle(.deviceChanged(path: on1.path, ["UUIDs"]), now: F.at(2100), tree: hci0Off).plans.isEmpty)
        let ended = core.handle(.sessionEnded(path: on0.path), now: F.at(2200), tree: hci0Off)
        #expect(ended.plans.map(\.path) == [on1.path], "\(ended.decisions)")
        // Powered on again by someone: used again, the device stays where it is (no move without the rule).
        let back = core.handle(.adapterChanged("hci0", ["Powered"]), now: F.at(3000), tree: Self.tree(hci0: Self.adapter(), devices: [on0, on1]))
        #expect(back.plans.isEmpty && back.decisions.contains(.startDiscovery(adapter: "hci0", uuids: ["0000180f-0000-1000-8000-00805f9b34fb"], duplicateData: false)))
        #expect(core.sessions == [on1.path])
    }

    @Test("with one adapter left, a power-off is undone by the bridge as before, and the sessions wait")
    func lastAdapterIsPoweredAgain() throws {
        var core = try Self.scanning()
        let on0 = Self.device(on: "hci0", rssi: -60)
        _ = core.handle(.deviceAdded(path: on0.path), now: F.at(1000), tree: Self.tree(devices: [on0]))
        let gone1 = core.handle(.adapterRemoved("hci1"), now: F.at(1500), tree: Self.tree(hci1: nil))
        #expect(gone1.decisions == [], "no session on hci1: \(gone1.decisions)")
        let off = core.handle(.adapterChanged("hci0", ["Powered"]), now: F.at(2000), tree: Self.tree(hci0: Self.adapter(false), hci1: nil))
        #expect(off.decisions == [.powerOn(adapter: "hci0")])
    }

    @Test("a connected device moves only when the other adapter is stronger by the margin for switch_after, disconnecting first")
    func moveByTheRule() throws {
        var core = try Self.scanning()
        let on0 = Self.device(on: "hci0", rssi: -70), on1 = Self.device(on: "hci1", rssi: -75)
        _ = core.handle(.deviceAdded(path: on0.path), now: F.at(1000), tree: Self.tree(devices: [on0, on1]))
        _ = core.handle(.linkChanged(path: on0.path, connected: true), now: F.at(1100), tree: Self.tree())
        // hci1 now 15 dB stronger: not yet.
        let better = [Self.device(on: "hci0", rssi: -75), Self.device(on: "hci1", rssi: -60)]
        #expect(core.handle(.deviceChanged(path: on1.path, ["RSSI"]), now: F.at(2000), tree: Self.tree(devices: better)).decisions == [])
        #expect(core.placement.nextDeadline == F.at(32_000))
        // Dropping below the margin once starts the wait over.
        let close = [Self.device(on: "hci0", rssi: -70), Self.device(on: "hci1", rssi: -65)]
        #expect(core.handle(.deviceChanged(path: on1.path, ["RSSI"]), now: F.at(10_000), tree: Self.tree(devices: close)).decisions == [])
        #expect(core.handle(.deviceChanged(path: on1.path, ["RSSI"]), now: F.at(12_000), tree: Self.tree(devices: better)).decisions == [])
        #expect(core.handle(.tick(lastAdvertisement: nil), now: F.at(41_999), tree: Self.tree(devices: better)).decisions == [])
        let moved = core.handle(.tick(lastAdvertisement: nil), now: F.at(42_000), tree: Self.tree(devices: better))
        #expect(moved.decisions == [.send(path: on0.path, .stop)], "\(moved.decisions)")
        // The new session starts only once the old one ended.
        #expect(core.handle(.linkChanged(path: on0.path, connected: false), now: F.at(42_100), tree: Self.tree()).plans.isEmpty)
        let ended = core.handle(.sessionEnded(path: on0.path), now: F.at(43_000), tree: Self.tree(devices: better))
        #expect(ended.plans.map(\.path) == [better[1].path], "\(ended.decisions)")
    }

    @Test("a stored peripheral BlueZ has no object of: ConnectDevice through one adapter, no session elsewhere meanwhile")
    func storedThroughOneAdapter() throws {
        var core = SupervisorCore(config: try F.config(Self.twoAdapters + "\nstate_file: /nonexistent/p.json"), now: F.at(0))
        _ = core.handle(.started(stored: [KnownPeripheral(address: Self.lock, addressType: "public")]), now: F.at(0), tree: F.noBlueZ)
        let actions = core.handle(.bluezAvailable, now: F.at(0), tree: Self.tree(hci0: Self.adapter(), hci1: Self.adapter(), freeSlots: ["hci0": 6, "hci1": 7]))
        let path1 = BlueZNames.devicePath(adapter: "/org/bluez/hci1", address: Self.lock)
        // The adapter with the most free slots; its scan waits for the ConnectDevice, the other's does not.
        #expect(actions.decisions == [
            .connectDevice(address: Self.lock, addressType: "public", path: path1),
            .startDiscovery(adapter: "hci0", uuids: ["0000180f-0000-1000-8000-00805f9b34fb"], duplicateData: false),
        ])
        // hci0's scan finds it meanwhile: no session there (ConnectDevice may be linking through hci1).
        let seen0 = Self.device(on: "hci0", rssi: -50)
        #expect(core.handle(.deviceAdded(path: seen0.path), now: F.at(100), tree: Self.tree(devices: [seen0])).plans.isEmpty)
        // The object ConnectDevice made appears: its session.
        let made = Self.device(on: "hci1", rssi: nil)
        #expect(core.handle(.deviceAdded(path: made.path), now: F.at(200), tree: Self.tree(devices: [seen0, made])).plans.map(\.path) == [made.path])
        #expect(
            core.handle(.storedConnectReturned(path: path1), now: F.at(300), tree: Self.tree(hci1: Self.adapter(), devices: [seen0, made])).decisions
                == [.startDiscovery(adapter: "hci1", uuids: ["0000180f-0000-1000-8000-00805f9b34fb"], duplicateData: false)])
        #expect(core.sessions == [made.path])
    }

    @Test("bluetooth.adapters: all follows adapters as they come")
    func allAdapters() throws {
        var core = SupervisorCore(config: try F.config("bluetooth: { adapters: all, services: [\"180f\"] }"), now: F.at(0))
        let uuids = ["0000180f-0000-1000-8000-00805f9b34fb"]
        var adapters = ["hci0": Self.adapter()]
        #expect(
            core.handle(.bluezAvailable, now: F.at(0), tree: SupervisorCore.Tree(bluezAvailable: true, adapters: adapters)).decisions
                == [.startDiscovery(adapter: "hci0", uuids: uuids, duplicateData: false)])
        adapters["hci3"] = Self.adapter(false)
        let plugged = SupervisorCore.Tree(bluezAvailable: true, adapters: adapters)
        #expect(core.handle(.adapterAdded("hci3"), now: F.at(1000), tree: plugged).decisions == [.powerOn(adapter: "hci3")])
        adapters["hci3"] = Self.adapter()
        #expect(
            core.handle(.adapterChanged("hci3", ["Powered"]), now: F.at(1100), tree: SupervisorCore.Tree(bluezAvailable: true, adapters: adapters))
                .decisions == [.startDiscovery(adapter: "hci3", uuids: uuids, duplicateData: false)])
        #expect(core.knownAdapters == ["hci0", "hci3"])
    }
}
