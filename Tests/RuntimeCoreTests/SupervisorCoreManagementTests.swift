import BridgeCore
import ConfigLoader
import Testing

@testable import RuntimeCore

/// ``SupervisorCore``'s run-time devices (SPEC §14), driven directly with a fake time: the requests, the retained
/// entries, the sync after a broker connection, the sessions of a new device set.
@Suite struct SupervisorCoreManagementTests {
    typealias F = CoreFixture
    static let porch = "C0:FF:EE:00:00:01"
    static let fixedYAML = "devices: [{ match: { address: \"\(F.thermo)\" }, name: kitchen }]"

    /// A scanning core with bridge.yaml's `kitchen` and ConfigLoader's decoder.
    static func core(_ yaml: String = fixedYAML) throws -> SupervisorCore {
        var core = try F.scanning(yaml)
        let config = core.config
        core.decodeAddedDevice = { json throws(ConfigError) in try config.decodeAddedDevice(json) }
        return core
    }

    static func request(_ core: inout SupervisorCore, _ command: String, _ json: String, at ms: Int64 = 2000,
                        tree: SupervisorCore.Tree = F.scanningTree) -> [SupervisorCore.Action] {
        core.handle(.request(command: command, payload: Array(json.utf8)), now: F.at(ms), tree: tree)
    }

    static func response(_ actions: [SupervisorCore.Action]) -> SupervisorCore.Response? {
        actions.lazy.compactMap { if case .respond(let r) = $0 { r } else { nil } }.first
    }

    static func retained(_ actions: [SupervisorCore.Action]) -> [String: String] {
        var out: [String: String] = [:]
        for case .publishRetained(let topic, let payload) in actions { out[topic] = String(decoding: payload, as: UTF8.self) }
        return out
    }

    static let addPorch = #"{"name":"porch","match":{"address":"C0:FF:EE:00:00:01"},"connection":"advertisement","transaction":9}"#

    @Test("device/add publishes the entry retained (without the transaction), writes devices_file and serves it at once")
    func add() throws {
        var core = try Self.core()
        let ad = F.device(Self.porch, name: "SBHT-003C")
        let actions = Self.request(&core, "device/add", Self.addPorch, tree: F.tree(devices: [ad]))
        let response = try #require(Self.response(actions))
        #expect(response.error == nil)
        #expect(response.body == .device(name: "porch", address: Self.porch))
        #expect(response.transaction == .integer(9))
        #expect(Self.retained(actions)["ble/config/devices/porch"]
            == #"{"name":"porch","match":{"address":"C0:FF:EE:00:00:01"},"connection":"advertisement"}"#)
        #expect(actions.contains { if case .writeAddedDevices(let e) = $0 { e.count == 1 } else { false } })
        #expect(core.config.devices.map(\.name) == ["kitchen", "porch"])
        // BlueZ knows the device already: its session starts now, as an advertisement device under its name.
        #expect(actions.plans.map(\.segment) == ["porch"])
        #expect(actions.plans.first?.policy.name == "advertisement")
    }

    @Test("device/add errors: not JSON, the loader's own message, a name or address taken by bridge.yaml or an earlier add")
    func addErrors() throws {
        var core = try Self.core()
        func code(_ json: String) -> (SupervisorCore.Response.Code?, String?) {
            let r = Self.response(Self.request(&core, "device/add", json))
            return (r?.errorCode, r?.error)
        }
        #expect(code("{nope").0 == .invalidPayload)
        #expect(code("[1]").0 == .invalidPayload)
        #expect(code(#"{"match":{"address":"C0:FF:EE:00:00:01"}}"#) == (.invalidPayload, "missing required key 'name' in 'devices[0]'"))
        let unknown = code(#"{"name":"x","match":{"address":"C0:FF:EE:00:00:01"},"colour":1}"#)
        #expect(unknown.0 == .invalidPayload)
        #expect(unknown.1?.hasPrefix("unknown key 'colour' in 'devices[0]'") == true)
        #expect(code(#"{"name":"kitchen","match":{"address":"C0:FF:EE:00:00:01"}}"#).0 == .exists)
        #expect(code(#"{"name":"other","match":{"address":"E4:5F:01:AB:CD:EF"}}"#).0 == .exists)
        #expect(code(#"{"name":"bridge","match":{"address":"C0:FF:EE:00:00:01"}}"#).0 == .invalidPayload)
        #expect(code(Self.addPorch).0 == nil)
        #expect(code(Self.addPorch).0 == .exists)
        #expect(code(#"{"name":"porch2","match":{"address":"C0:FF:EE:00:00:01"}}"#).0 == .exists)
        #expect(core.added.segments == ["porch"])
    }

    @Test("remove and rename: only run-time devices; not_found, read_only; management: false refuses everything")
    func removeRename() throws {
        var core = try Self.core()
        _ = Self.request(&core, "device/add", Self.addPorch)
        #expect(Self.response(Self.request(&core, "device/remove", #"{"device":"kitchen"}"#))?.errorCode == .readOnly)
        #expect(Self.response(Self.request(&core, "device/remove", #"{"device":"nobody"}"#))?.errorCode == .notFound)
        #expect(Self.response(Self.request(&core, "device/rename", #"{"device":"porch","name":"kitchen"}"#))?.errorCode == .exists)
        #expect(Self.response(Self.request(&core, "device/rename", #"{"device":"porch","name":"a/b"}"#))?.errorCode == .invalidPayload)
        let renamed = Self.request(&core, "device/rename", #"{"device":"porch","name":"terrace"}"#)
        #expect(Self.response(renamed)?.error == nil)
        #expect(Self.retained(renamed)["ble/config/devices/porch"] == "")
        #expect(Self.retained(renamed)["ble/config/devices/terrace"]?.hasPrefix(#"{"name":"terrace","#) == true)
        #expect(Self.retained(renamed)["ble/porch/availability"] == "")
        #expect(core.added.segments == ["terrace"])
        let removed = Self.request(&core, "device/remove", #"{"device":"terrace"}"#)
        #expect(Self.response(removed)?.error == nil)
        #expect(Self.retained(removed)["ble/config/devices/terrace"] == "")
        #expect(core.added.segments.isEmpty)
        #expect(core.config.devices.map(\.name) == ["kitchen"])

        var off = try Self.core(Self.fixedYAML + "\nmanagement: false")
        #expect(Self.response(Self.request(&off, "device/add", Self.addPorch))?.errorCode == .readOnly)
        // ... but a retained entry is served.
        _ = off.handle(.configDevice(segment: "porch", payload: Array(Self.addPorch.utf8)), now: F.at(3000), tree: F.scanningTree)
        #expect(off.added.segments == ["porch"])
    }

    @Test("a session of a removed device is forgotten; of a renamed one stopped, its old availability cleared when it ends")
    func sessions() throws {
        var core = try Self.core()
        let ad = F.device(Self.porch, name: "SBHT-003C")
        _ = Self.request(&core, "device/add", Self.addPorch, tree: F.tree(devices: [ad]))
        #expect(core.sessions == [ad.path])
        let renamed = Self.request(&core, "device/rename", #"{"device":"porch","name":"terrace"}"#, tree: F.tree(devices: [ad]))
        #expect(renamed.contains(.send(path: ad.path, .stop)))
        #expect(!renamed.contains(.homeAssistantRemove(path: ad.path)))
        let ended = core.handle(.sessionEnded(path: ad.path), now: F.at(2500), tree: F.tree(devices: [ad]))
        #expect(Self.retained(ended)["ble/porch/availability"] == "")
        #expect(ended.plans.map(\.segment) == ["terrace"])
        let removed = Self.request(&core, "device/remove", #"{"device":"terrace"}"#, at: 3000, tree: F.tree(devices: [ad]))
        #expect(removed.contains(.homeAssistantRemove(path: ad.path)))
        #expect(removed.contains(.forgetStored(address: Self.porch)))
    }

    @Test("retained entries: served, replaced, removed when emptied; bridge.yaml wins; a bad one is logged and ignored")
    func retainedEntries() throws {
        var core = try Self.core()
        func feed(_ segment: String, _ json: String) -> [SupervisorCore.Action] {
            core.handle(.configDevice(segment: segment, payload: Array(json.utf8)), now: F.at(3000), tree: F.scanningTree)
        }
        _ = feed("porch", Self.addPorch)
        #expect(core.added.segments == ["porch"])
        #expect(feed("kitchen", #"{"name":"kitchen","match":{"address":"C0:FF:EE:00:00:05"}}"#).logs.contains { $0.contains("bridge.yaml wins") })
        #expect(feed("bad", "{").logs.contains { $0.contains("not JSON") })
        #expect(feed("other", Self.addPorch).logs.contains { $0.contains("its name is 'porch'") })
        _ = feed("porch", "")
        #expect(core.added.segments.isEmpty)
    }

    @Test("after a broker connection: entries the broker did not replay are removed; a broker with none gets this bridge's")
    func sync() throws {
        var core = try Self.core()
        var out: [SupervisorCore.Action] = []
        core.loadAdded([try JSONParser.parse(Array(Self.addPorch.utf8)),
                        try JSONParser.parse(Array(#"{"name":"shed","match":{"address":"C0:FF:EE:00:00:07"}}"#.utf8))], &out)
        #expect(core.added.segments == ["porch", "shed"])
        // A broker that lost its retained messages: this bridge publishes its entries again at the window's end.
        _ = core.handle(.brokerConnected, now: F.at(10_000), tree: F.scanningTree)
        #expect(core.nextDeadline! <= F.at(12_000))
        let empty = core.handle(.tick(lastAdvertisement: nil), now: F.at(12_000), tree: F.scanningTree)
        #expect(Set(Self.retained(empty).keys).isSuperset(of: ["ble/config/devices/porch", "ble/config/devices/shed"]))
        // A broker that holds only porch: shed was removed through another bridge meanwhile.
        _ = core.handle(.brokerConnected, now: F.at(20_000), tree: F.scanningTree)
        _ = core.handle(.configDevice(segment: "porch", payload: Array(Self.addPorch.utf8)), now: F.at(20_100), tree: F.scanningTree)
        let synced = core.handle(.tick(lastAdvertisement: nil), now: F.at(22_000), tree: F.scanningTree)
        #expect(core.added.segments == ["porch"])
        #expect(synced.logs.contains { $0.contains("shed was removed") })
    }

    @Test("scan: its window runs the scan and is answered once over; a bad window is refused")
    func scan() throws {
        var core = try Self.core()
        #expect(Self.response(Self.request(&core, "scan", #"{"seconds":0}"#))?.errorCode == .invalidPayload)
        #expect(Self.response(Self.request(&core, "scan", #"{"seconds":"x"}"#))?.errorCode == .invalidPayload)
        let started = Self.request(&core, "scan", #"{"seconds":3,"transaction":"s"}"#)
        #expect(started.contains(.scanStarted))
        #expect(Self.response(started) == nil)
        #expect(core.nextDeadline! <= F.at(5000))
        let early = core.handle(.tick(lastAdvertisement: nil), now: F.at(4000), tree: F.scanningTree)
        #expect(!early.contains { if case .answerScan = $0 { true } else { false } })
        let done = core.handle(.tick(lastAdvertisement: nil), now: F.at(5000), tree: F.scanningTree)
        let answer = done.compactMap { if case .answerScan(let r, let since) = $0 { (r, since) } else { nil } }
        #expect(answer.count == 1)
        #expect(answer.first?.0.transaction == .string("s"))
        #expect(answer.first?.1 == F.at(2000))
        #expect(done.contains(.scanFinished))
    }

    @Test("scan with a service filter: the running scan hears everyone for the window, then takes its filter back")
    func scanLiftsTheFilter() throws {
        var core = try Self.core("bluetooth: { services: [\"180f\"] }")
        func starts(_ actions: [SupervisorCore.Action]) -> [[String]] {
            actions.compactMap { if case .startDiscovery(_, let uuids, _) = $0 { uuids } else { nil } }
        }
        let started = Self.request(&core, "scan", #"{"seconds":2}"#)
        #expect(starts(started) == [[]])
        _ = core.handle(.discoveryFinished(error: BluetoothError(code: .inProgress, name: "InProgress", message: "")),
                        now: F.at(2100), tree: F.scanningTree)
        let done = core.handle(.tick(lastAdvertisement: nil), now: F.at(4000), tree: F.scanningTree)
        #expect(starts(done) == [[BluetoothUUID("180f")!.uuidString]])
    }
}

/// SPEC §10 rule 2 for a device added at run time: every bridge learns of it by its retained entry, a little apart.
@Suite struct SupervisorCoreManagementClusterTests {
    typealias F = CoreFixture

    @Test("a device added at run time is claimed by nobody for two sightings intervals, then by the best hearer")
    func claimsWait() throws {
        var core = try F.scanning("cluster: { enabled: true }\nbridge: { id: beta }")
        let config = core.config
        core.decodeAddedDevice = { json throws(ConfigError) in try config.decodeAddedDevice(json) }
        _ = core.handle(.brokerConnected, now: F.at(0), tree: F.scanningTree)
        let ad = F.device("C0:FF:EE:00:00:01", name: "x")
        // Long settled on the broker.
        _ = core.handle(.tick(lastAdvertisement: nil), now: F.at(60_000), tree: F.scanningTree)
        let added = core.handle(
            .request(command: "device/add", payload: Array(#"{"name":"tick3","match":{"address":"C0:FF:EE:00:00:01"}}"#.utf8)),
            now: F.at(61_000), tree: F.tree(devices: [ad]))
        func claims(_ actions: [SupervisorCore.Action]) -> Bool {
            actions.contains { if case .publishRetained(let t, let p) = $0 { t == "ble/tick3/owner" && !p.isEmpty } else { false } }
        }
        #expect(!claims(added))
        #expect(core.cluster?.ownership.claimsHeldUntil["tick3"] == F.at(71_000))
        let early = core.handle(.tick(lastAdvertisement: nil), now: F.at(66_000), tree: F.tree(devices: [ad]))
        #expect(!claims(early))
        #expect(core.nextDeadline.map { $0 <= F.at(71_000) } == true)
    }
}
