import BridgeCore
import Testing

@testable import RuntimeCore

/// The cluster's gate in ``SupervisorCore`` (SPEC §10): a wanted device gets a session only while the cluster lets
/// this bridge serve it.
@Suite struct SupervisorCoreClusterTests {
    typealias F = CoreFixture

    static let yaml = """
        bridge: { id: kitchen }
        cluster: { enabled: true }
        bluetooth: { services: ["180f"] }
        devices:
          - match: { address: "C8:12:34:56:78:9A" }
            name: polar
        """

    static var polar: BluetoothAddress { BluetoothAddress("C8:12:34:56:78:9A")! }

    @Test("devices named by address and stored peripherals are wanted at start; nothing is connected")
    func wantedAtStart() throws {
        var core = SupervisorCore(config: try F.config(Self.yaml), now: F.at(0))
        let stored = KnownPeripheral(address: F.thermo, addressType: "random")
        let actions = core.handle(.started(stored: [stored]), now: F.at(0), tree: F.noBlueZ)
        #expect(
            actions.decisions == [
                .clusterWant(segment: "polar", address: Self.polar, service: .link),
                .clusterWant(segment: "e45f01abcdef", address: BluetoothAddress(F.thermo)!, service: .link),
            ])
        // The adapter is ready: the stored peripheral is not connected (rule 6: only once served), the scan runs.
        let ready = core.handle(.bluezAvailable, now: F.at(10), tree: F.tree(F.adapter()))
        #expect(!ready.decisions.contains { if case .connectDevice = $0 { true } else { false } }, "\(ready.decisions)")
        #expect(ready.decisions.contains { if case .startDiscovery = $0 { true } else { false } }, "\(ready.decisions)")
    }

    @Test("a found device is told to the cluster once and gets no session until served; stopping serving stops it")
    func gate() throws {
        var core = try F.scanning(Self.yaml)
        let thermo = F.device(F.thermo, uuids: ["180f"])
        let found = core.handle(.deviceAdded(path: thermo.path), now: F.at(1000), tree: F.tree(devices: [thermo]))
        #expect(
            found.decisions == [.clusterWant(segment: "e45f01abcdef", address: BluetoothAddress(F.thermo)!, service: .link)])
        #expect(core.sessions.isEmpty)
        // Seen again: not told twice, still no session.
        #expect(core.handle(.deviceChanged(path: thermo.path, ["UUIDs"]), now: F.at(1100), tree: F.tree(devices: [thermo])).decisions == [])
        #expect(core.clusterPath("e45f01abcdef") == thermo.path)
        // Served: the session starts.
        let served = core.handle(.serve(segment: "e45f01abcdef"), now: F.at(2000), tree: F.tree(devices: [thermo]))
        #expect(served.plans.map(\.path) == [thermo.path], "\(served.decisions)")
        #expect(core.sessions == [thermo.path])
        // Taken away: the session is told to stop; when it ended, none starts again.
        #expect(core.handle(.stopServing(segment: "e45f01abcdef"), now: F.at(3000), tree: F.scanningTree).decisions
            == [.send(path: thermo.path, .stop)])
        let ended = core.handle(.sessionEnded(path: thermo.path), now: F.at(3100), tree: F.tree(devices: [thermo]))
        #expect(ended.plans.isEmpty, "\(ended.decisions)")
        #expect(core.sessions.isEmpty)
    }

    @Test("a wanted device connected but not served (a crashed run's link) is disconnected")
    func staleLinkDropped() throws {
        let polar = F.device(Self.polar.description, connected: true)
        var core = SupervisorCore(config: try F.config(Self.yaml), now: F.at(0))
        _ = core.handle(.started(stored: []), now: F.at(0), tree: F.noBlueZ)
        let actions = core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter(), devices: [polar]))
        #expect(actions.decisions.contains(.disconnectDevice(path: polar.path)), "\(actions.decisions)")
        #expect(core.sessions.isEmpty)
    }

    @Test("served while BlueZ has no object: a stored peripheral is connected with ConnectDevice, else the scan waits")
    func servedWithoutObject() throws {
        let stored = KnownPeripheral(address: F.thermo, addressType: "random")
        var core = try F.scanning(Self.yaml, stored: [stored])
        #expect(
            core.handle(.serve(segment: "e45f01abcdef"), now: F.at(1000), tree: F.scanningTree).decisions
                == [.connectDevice(address: F.thermo, addressType: "random", path: F.path(F.thermo))])
        #expect(core.handle(.serve(segment: "polar"), now: F.at(1000), tree: F.scanningTree).decisions == [])
        // The scan finds it: served, so its session starts.
        let polar = F.device(Self.polar.description)
        #expect(core.handle(.deviceAdded(path: polar.path), now: F.at(2000), tree: F.tree(devices: [polar])).plans.count == 1)
    }

    @Test("a cluster member keeps scanning although every wanted device is connected")
    func keepsScanning() throws {
        var core = try F.scanning("bridge: { id: kitchen }\ncluster: { enabled: true }\ndevices: [{ match: { address: \"C8:12:34:56:78:9A\" } }]\n")
        #expect(core.discoveryNeeded("hci0"))
        var plain = try F.scanning("devices: [{ match: { address: \"C8:12:34:56:78:9A\" } }]\n")
        let polar = F.device(Self.polar.description)
        _ = plain.handle(.deviceAdded(path: polar.path), now: F.at(1000), tree: F.tree(devices: [polar]))
        _ = plain.handle(.availability(path: polar.path, true), now: F.at(1100), tree: F.scanningTree)
        #expect(!plain.discoveryNeeded("hci0"))
        _ = core.handle(.serve(segment: "c8123456789a"), now: F.at(1000), tree: F.tree(devices: [polar]))
        _ = core.handle(.availability(path: polar.path, true), now: F.at(1100), tree: F.scanningTree)
        #expect(core.discoveryNeeded("hci0"))
    }
}
