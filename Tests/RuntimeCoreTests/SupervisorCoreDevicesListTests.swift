import BridgeCore
import Testing

@testable import RuntimeCore

/// `{base}/bridge/devices` as ``SupervisorCore`` decides it (``SupervisorCore+DevicesList``): its content from the
/// records and the device objects' snapshots the inputs carried, published only when it changed (or forced), the
/// `devices` request answering the same list; and the inputs the core drops while it stops.
@Suite struct SupervisorCoreDevicesListTests {
    typealias F = CoreFixture

    static func snapshot(rssi: Int? = -61, connected: Bool = false, paired: Bool = false, bonded: Bool = false) -> DeviceSnapshot {
        DeviceSnapshot(
            path: F.path(F.thermo), address: BluetoothAddress(F.thermo)!, name: "Thermo", rssi: rssi,
            uuids: [BluetoothUUID("180f")!, BluetoothUUID("1800")!], connected: connected, paired: paired, bonded: bonded)
    }

    /// The devices published by `actions` (nil: none).
    static func published(_ actions: [SupervisorCore.Action]) throws -> [JSONValue]? {
        let payloads = actions.compactMap { if case .sendDevices(let p) = $0 { p } else { nil } }
        #expect(payloads.count <= 1, "one list per input: \(payloads.count)")
        guard let payload = payloads.first else { return nil }
        let list: [JSONValue] = try #require(try JSONParser.parse(payload).arrayValue)
        return list
    }

    @Test("one entry per managed device: the record's facts and the last snapshot of its object (GAP not listed, RSSI 127 is null)")
    func content() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        let found = core.handle(.deviceAdded(path: F.path(F.thermo)), now: F.at(1000), tree: F.tree(devices: [Self.snapshot()]))
        let list = try #require(try Self.published(found))
        #expect(list.count == 1)
        let entry = try #require(list.first)
        #expect(entry["name"]?.stringValue == "e45f01abcdef")
        #expect(entry["address"]?.stringValue == F.thermo)
        #expect(entry["address_type"]?.stringValue == "public")
        #expect(entry["connected"]?.boolValue == false)
        #expect(entry["rssi"]?.int64Value == -61)
        #expect(entry["services"]?.arrayValue == [.string("180f")], "advertised, without GAP: \(entry)")
        #expect(entry["connection"]?.stringValue == "always")
        #expect(entry["available"]?.boolValue == false)
        #expect(entry["adapter"]?.stringValue == "hci0")
        #expect(entry["paired"]?.boolValue == false && entry["bonded"]?.boolValue == false)

        // An RSSI of 127 ("not measured") is null; a change of the object alone publishes nothing (only the
        // inputs that change the list do), the next list shows it.
        let quiet = core.handle(
            .deviceChanged(path: F.path(F.thermo), ["RSSI"]), now: F.at(1100), tree: F.tree(devices: [Self.snapshot(rssi: 127)]))
        #expect(try Self.published(quiet) == nil)
        let linked = core.handle(
            .linkChanged(path: F.path(F.thermo), connected: true), now: F.at(1200), tree: F.tree(devices: [Self.snapshot(rssi: 127)]))
        let after = try #require(try Self.published(linked)?.first)
        #expect(after["rssi"]?.isNull == true && after["connected"]?.boolValue == true, "\(after)")
    }

    @Test("connected: the session's link or BlueZ's Connected; services: resolved segments while connected")
    func connectedAndServices() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        _ = core.handle(.deviceAdded(path: F.path(F.thermo)), now: F.at(1000), tree: F.tree(devices: [Self.snapshot()]))
        // BlueZ says Connected (5.66 may not signal it after Connect): listed as connected, the session not.
        let paired = core.handle(
            .paired(path: F.path(F.thermo)), now: F.at(1100), tree: F.tree(devices: [Self.snapshot(connected: true, paired: true, bonded: true)]))
        let entry = try #require(try Self.published(paired)?.first)
        #expect(entry["connected"]?.boolValue == true && core.devices[F.path(F.thermo)]?.connected == false)
        #expect(entry["paired"]?.boolValue == true && entry["bonded"]?.boolValue == true)
        let mapped = MappedDevice(
            characteristics: ["battery/level": "00002a19-0000-1000-8000-00805f9b34fb"],
            services: ["0000180f-0000-1000-8000-00805f9b34fb"], serviceSegments: ["battery"], discovery: [], name: nil,
            information: DeviceInformation())
        let resolved = core.handle(
            .mapped(path: F.path(F.thermo), mapped), now: F.at(1200), tree: F.tree(devices: [Self.snapshot(connected: true, paired: true)]))
        #expect(try Self.published(resolved)?.first?["services"]?.arrayValue == [.string("battery")])
        // The object removed: nothing of BlueZ's side is left to show.
        _ = core.handle(.deviceRemoved(path: F.path(F.thermo)), now: F.at(1300), tree: F.scanningTree)
        let gone = core.handle(.linkChanged(path: F.path(F.thermo), connected: false), now: F.at(1400), tree: F.scanningTree)
        let last = try #require(try Self.published(gone)?.first)
        #expect(last["rssi"]?.isNull == true && last["paired"]?.boolValue == false && last["services"]?.arrayValue == [], "\(last)")
    }

    @Test("published only when it changed, unless forced (a broker connection); the devices request answers the same list")
    func deduplicated() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }")
        let thermo = F.path(F.thermo)
        _ = core.handle(.deviceAdded(path: thermo), now: F.at(1000), tree: F.tree(devices: [Self.snapshot()]))
        let first = core.lastDevicesPayload
        #expect(!first.isEmpty)
        // A second connection adds to `connects` only: the list is the same.
        _ = core.handle(.linkChanged(path: thermo, connected: true), now: F.at(1100), tree: F.tree(devices: [Self.snapshot()]))
        _ = core.handle(.linkChanged(path: thermo, connected: false), now: F.at(1200), tree: F.tree(devices: [Self.snapshot()]))
        #expect(core.lastDevicesPayload == first)
        #expect(try Self.published(core.handle(.paired(path: thermo), now: F.at(1300), tree: F.tree(devices: [Self.snapshot()]))) == nil)
        let forced = core.handle(.brokerConnected, now: F.at(1400), tree: F.scanningTree)
        #expect(forced.contains(.sendDevices(first)))
        let answer = core.handle(.request(command: "devices", payload: []), now: F.at(1500), tree: F.scanningTree)
        #expect(answer == [.respond(.init(command: "devices", body: .devices(try #require(try JSONParser.parse(first).arrayValue))))])
    }

    @Test("while stopping the core drops what the executor once filtered: pairing reports, legacy configs, the broker, requests")
    func stoppingGate() throws {
        var core = try F.scanning("bluetooth: { services: [\"180f\"] }\ntrackers: [{ name: phone, match: { address: \"AA:BB:CC:DD:EE:01\" } }]")
        let thermo = F.path(F.thermo)
        _ = core.handle(.deviceAdded(path: thermo), now: F.at(1000), tree: F.tree(devices: [Self.snapshot()]))
        let topic = "homeassistant/sensor/e45f01abcdef_battery/config"
        #expect(core.handle(.legacyDiscovery(topic: topic), now: F.at(1100), tree: F.scanningTree) == [.clearLegacyDiscovery(topic: topic)])
        #expect(core.handle(.brokerConnected, now: F.at(1200), tree: F.scanningTree).last == .presenceBroker(up: true))
        #expect(core.handle(.brokerDisconnected, now: F.at(1300), tree: F.scanningTree).last == .presenceBroker(up: false))
        _ = core.handle(.stop, now: F.at(2000), tree: F.scanningTree)
        for event: SupervisorCore.Event in [
            .legacyDiscovery(topic: topic), .paired(path: thermo), .brokerConnected, .brokerDisconnected,
            .request(command: "devices", payload: []), .homeAssistantOnline, .deviceAdded(path: thermo),
        ] {
            #expect(core.handle(event, now: F.at(2100), tree: F.tree(devices: [Self.snapshot(paired: true)])) == [], "\(event)")
        }
        #expect(core.handle(.sessionEnded(path: thermo), now: F.at(2200), tree: F.scanningTree).decisions == [.unregister(path: thermo), .finishShutdown])
    }
}
