import BridgeCore
import Testing

@testable import RuntimeCore

/// The cluster in ``SupervisorCore`` (SPEC §10): a wanted device gets a session only while the cluster lets this
/// bridge serve it, decided by the core's own ``ClusterCore`` in the same step.
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
    static let thermoSegment = "e45f01abcdef"

    /// The thermometer heard at -60 dBm.
    static var thermo: DeviceSnapshot {
        DeviceSnapshot(
            path: F.path(F.thermo), address: BluetoothAddress(F.thermo)!, rssi: -60, uuids: [BluetoothUUID("180f")!])
    }

    /// The cluster publishes of `actions`.
    static func published(_ actions: [SupervisorCore.Action]) -> [(topic: String, payload: [UInt8])] {
        actions.compactMap { if case .publishRetained(let topic, let payload) = $0 { (topic, payload) } else { nil } }
    }

    /// Runs the core from `from` to `to` (ms): a tick at each of its deadlines, with `devices` in each tick's tree
    /// where the tick asks for them; every owner claim it publishes comes back as the broker's echo. Returns every
    /// action.
    static func run(
        _ core: inout SupervisorCore, from: Int64, to: Int64, devices: [DeviceSnapshot] = []
    ) -> [SupervisorCore.Action] {
        var all: [SupervisorCore.Action] = []
        var now = from
        while let next = core.nextDeadline, next <= F.at(to) {
            now = max(now, Int64(next.offset.components.seconds * 1000 + next.offset.components.attoseconds / 1_000_000_000_000_000))
            let needed = Set(core.pathsNeeded(at: F.at(now)))
            let tree = F.tree(devices: devices.filter { needed.contains($0.path) })
            let actions = core.handle(.tick(lastAdvertisement: nil), now: F.at(now), tree: tree, unixTime: 100 + now / 1000)
            all += actions
            for (topic, payload) in published(actions) {
                guard let parsed = core.cluster?.topics.parse(topic), case .owner = parsed else { continue }
                all += core.handle(.clusterMessage(parsed, payload: payload), now: F.at(now + 10), tree: F.scanningTree, unixTime: 100 + now / 1000)
            }
            if all.count > 10_000 { break }
        }
        return all
    }

    @Test("devices named by address and stored peripherals are wanted at start; nothing is connected")
    func wantedAtStart() throws {
        var core = SupervisorCore(config: try F.config(Self.yaml), now: F.at(0))
        let stored = KnownPeripheral(address: F.thermo, addressType: "random")
        let actions = core.handle(.started(stored: [stored]), now: F.at(0), tree: F.noBlueZ)
        #expect(core.cluster?.ownership.wanted == ["polar": .link, Self.thermoSegment: .link])
        #expect(actions.logs.filter { $0.contains("is wanted") }.count == 2, "\(actions.logs)")
        // Not on the broker yet: nothing to publish; alone, this bridge answers for unowned devices.
        #expect(actions.decisions == [.commandRoles(CommandRoles(answersUnowned: true))], "\(actions.decisions)")
        // The adapter is ready: the stored peripheral is not connected (rule 6: only once served), the scan runs.
        let ready = core.handle(.bluezAvailable, now: F.at(10), tree: F.tree(F.adapter()))
        #expect(!ready.decisions.contains { if case .connectDevice = $0 { true } else { false } }, "\(ready.decisions)")
        #expect(ready.decisions.contains { if case .startDiscovery = $0 { true } else { false } }, "\(ready.decisions)")
    }

    @Test("a found device is wanted once and gets no session until the cluster serves it, in the same core; stopping serving stops it")
    func gate() throws {
        var core = try F.scanning(Self.yaml)
        let connected = core.handle(.brokerConnected, now: F.at(1000), tree: F.scanningTree, unixTime: 101)
        #expect(connected.decisions.contains(.subscribeClusterTopics))
        #expect(Self.published(connected).contains { $0.topic == "ble/bridges/kitchen/sightings" })
        let thermo = Self.thermo
        let found = core.handle(.deviceAdded(path: thermo.path), now: F.at(1100), tree: F.tree(devices: [thermo]), unixTime: 101)
        #expect(core.cluster?.ownership.wanted[Self.thermoSegment] == .link)
        #expect(found.plans.isEmpty && core.sessions.isEmpty, "\(found.decisions)")
        // Seen again: not wanted twice, still no session.
        let again = core.handle(.deviceChanged(path: thermo.path, ["UUIDs"]), now: F.at(1200), tree: F.tree(devices: [thermo]))
        #expect(again.plans.isEmpty && !again.logs.contains { $0.contains("is wanted") })
        // Alone on the broker: after the quiet time it claims, hears its own claim back, and serves: the device's
        // objects are read at once and its session starts.
        let served = Self.run(&core, from: 1200, to: 12_000, devices: [thermo])
        #expect(Self.published(served).contains { $0.topic == "ble/\(Self.thermoSegment)/owner" }, "\(served.decisions)")
        #expect(served.plans.map(\.path) == [thermo.path], "\(served.decisions)")
        #expect(core.sessions == [thermo.path])
        #expect(served.decisions.contains(.commandRoles(CommandRoles(owners: [Self.thermoSegment: "kitchen"], answersUnowned: true))))
        // The broker lost: the cluster stops serving everything; when the session ended, none starts again.
        let lost = core.handle(.brokerDisconnected, now: F.at(13_000), tree: F.scanningTree, unixTime: 113)
        #expect(lost.decisions.contains(.send(path: thermo.path, .stop)), "\(lost.decisions)")
        let ended = core.handle(.sessionEnded(path: thermo.path), now: F.at(13_100), tree: F.tree(devices: [thermo]))
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
        _ = core.handle(.brokerConnected, now: F.at(1000), tree: F.scanningTree, unixTime: 101)
        // Nobody else on the broker: this bridge answers for (and, hearing nothing of them, claims nothing of) the
        // devices; make it hear both so that it claims them.
        for device in [Self.thermo, DeviceSnapshot(path: F.path(Self.polar.description), address: Self.polar, rssi: -70)] {
            _ = core.handle(.deviceChanged(path: device.path, ["RSSI"]), now: F.at(1100), tree: F.tree(devices: [device]), unixTime: 101)
        }
        #expect(core.sessions.isEmpty)
        // BlueZ dropped both objects (their trees are empty from now on).
        let served = Self.run(&core, from: 1200, to: 12_000)
        #expect(
            served.decisions.contains(.connectDevice(address: F.thermo, addressType: "random", path: F.path(F.thermo))),
            "\(served.decisions)")
        #expect(served.logs.contains { $0.contains("polar is ours; waiting for the scan") }, "\(served.logs)")
        // The scan finds polar: served, so its session starts.
        let polar = F.device(Self.polar.description)
        #expect(core.handle(.deviceAdded(path: polar.path), now: F.at(13_000), tree: F.tree(devices: [polar])).plans.count == 1)
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
        let heard = DeviceSnapshot(path: polar.path, address: Self.polar, rssi: -60)
        _ = core.handle(.brokerConnected, now: F.at(1000), tree: F.scanningTree, unixTime: 101)
        _ = core.handle(.deviceAdded(path: polar.path), now: F.at(1000), tree: F.tree(devices: [heard]), unixTime: 101)
        #expect(Self.run(&core, from: 1000, to: 12_000, devices: [heard]).plans.count == 1)
        _ = core.handle(.availability(path: polar.path, true), now: F.at(12_100), tree: F.scanningTree)
        #expect(core.discoveryNeeded("hci0"))
    }
}
