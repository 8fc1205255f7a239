import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// SPEC §14 on bluez-sim (scripts/sim/management.yaml): `scan`, and devices added, renamed and removed at run time
/// over MQTT (`{base}/bridge/request/device/...`), kept retained on `{base}/config/devices/{name}` and in
/// `devices_file`. The bridge's own configuration names only `strap` (GATT) and `thermo` (pvvx advertisements)
/// (``Management/config(management:homeAssistant:)``). More tests: ManagementTests+Errors.swift (every error code,
/// `management: false`), ManagementTests+Cluster.swift (a device added through one bridge of a cluster).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct ManagementTests {
    /// What `scan` must say of each simulated advertiser: its decoder (nil: none), `configured` (nil: not
    /// configured), address type, name and whether its frames are encrypted.
    struct Heard: Sendable {
        var address: String
        var addressType: String
        var name: String?
        var decoder: String?
        var configured: String?
        var encrypted = false
        var manufacturer: String?
        var model: String?
    }

    static let heard = [
        Heard(address: Management.pvvxAddress, addressType: "public", name: "ATC_00AA05", decoder: "pvvx", configured: "thermo"),
        Heard(address: Management.atcAddress, addressType: "public", name: "ATC_00AA06", decoder: "atc1441"),
        Heard(address: Management.bthomeAddress, addressType: "random", name: "SBHT-AA01", decoder: "bthome_v2"),
        Heard(address: Management.encryptedAddress, addressType: "random", name: "SBBT-AA02", decoder: "bthome_v2", encrypted: true),
        Heard(
            address: Management.goveeAddress, addressType: "public", name: "GVH5075_AA07", decoder: "govee",
            manufacturer: "Govee", model: "H5075"),
        Heard(address: Management.phoneAddress, addressType: "random"),
        Heard(address: Management.pantryAddress, addressType: "public", name: "Pantry Sim"),
        // Connected, and still advertising (peripherals do): heard, and configured.
        Heard(address: Management.strapAddress, addressType: "public", name: "Mgmt Strap", configured: "strap"),
    ]

    @Test("scan: every simulated advertiser with address, type, name, rssi, services, connectable, decoder, maker, model, encrypted and configured; values keep flowing meanwhile")
    func scan() async throws {
        try await Harness.with(Management.options()) { harness in
            try await harness.waitFor("ble/strap/availability") { $0.payload == "online" }
            try await harness.waitFor(Management.strapValues)
            let mark = harness.observer.count
            let started = ContinuousClock.now
            let (reply, transaction) = try await harness.request("scan", ["seconds": 2], timeout: .seconds(25))
            let took = ContinuousClock.now - started
            let data = Management.expectOK(reply, "scan", transaction: transaction)
            #expect(took >= .milliseconds(1500), "scan {\"seconds\": 2} answered after \(took): it did not listen for the window")

            let devices = try #require(data["devices"] as? [[String: Any]], "data.devices is not an array of objects: \(reply)")
            let keys: Set<String> = [
                "address", "address_type", "name", "rssi", "services", "connectable", "decoder", "manufacturer", "model",
                "encrypted", "configured",
            ]
            for device in devices {
                #expect(keys.isSubset(of: Set(device.keys)), "a scan entry lacks \(keys.subtracting(device.keys).sorted()): \(device)")
                let address = device["address"] as? String ?? ""
                #expect(address.wholeMatch(of: /[0-9A-F]{2}(:[0-9A-F]{2}){5}/) != nil, "address AA:BB:CC:DD:EE:FF: \(device)")
                #expect(["public", "random"].contains(device["address_type"] as? String), "address_type: \(device)")
                #expect(device["name"] is String || device["name"] is NSNull, "name: a string or null: \(device)")
                #expect(JSON.integer(device["rssi"]).map { (-127...20).contains($0) } ?? (device["rssi"] is NSNull), "rssi: \(device)")
                #expect(device["services"] is [String], "services: an array of strings: \(device)")
                #expect(JSON.bool(device["connectable"]) != nil, "connectable: a boolean: \(device)")
                #expect(JSON.bool(device["encrypted"]) != nil, "encrypted: a boolean: \(device)")
                for key in ["decoder", "manufacturer", "model", "configured"] {
                    #expect(device[key] is String || device[key] is NSNull, "\(key): a string or null: \(device)")
                }
            }
            let byAddress = Dictionary(devices.map { ($0["address"] as? String ?? "", $0) }, uniquingKeysWith: { first, _ in first })
            #expect(byAddress.count == devices.count, "an address listed twice: \(devices.compactMap { $0["address"] })")
            for expected in Self.heard {
                guard let device = byAddress[expected.address] else {
                    Issue.record("scan did not list \(expected.address) (\(expected.name ?? "no name")); it listed \(byAddress.keys.sorted())")
                    continue
                }
                let what = "scan entry of \(expected.address)"
                #expect(device["address_type"] as? String == expected.addressType, "\(what): \(device)")
                if let name = expected.name { #expect(device["name"] as? String == name, "\(what): name \(name): \(device)") }
                #expect(device["decoder"] as? String == expected.decoder, "\(what): decoder \(expected.decoder ?? "null"): \(device)")
                #expect(device["configured"] as? String == expected.configured, "\(what): configured \(expected.configured ?? "null"): \(device)")
                #expect(JSON.bool(device["encrypted"]) == expected.encrypted, "\(what): encrypted \(expected.encrypted): \(device)")
                #expect(JSON.integer(device["rssi"]) != nil, "\(what): an advertiser heard has an rssi: \(device)")
                if let manufacturer = expected.manufacturer {
                    #expect(device["manufacturer"] as? String == manufacturer, "\(what): manufacturer \(manufacturer): \(device)")
                }
                if let model = expected.model { #expect(device["model"] as? String == model, "\(what): model \(model): \(device)") }
            }
            let pantryServices = byAddress[Management.pantryAddress]?["services"] as? [String] ?? []
            #expect(pantryServices.contains(Management.pantryService), "the pantry's advertised service: \(pantryServices)")

            // The strap (notifying every 250 ms) kept publishing while the scan ran.
            let during = harness.observer.messages(Management.strapValues).filter { $0.index > mark && $0.index < reply.message.index }
            #expect(during.count >= 4, "\(during.count) strap values during the 2 s scan (4 a second expected)")
            #expect(harness.runningBridge.isRunning, "the bridge ended: \(harness.context())")
        }
    }

    @Test("device/add: a GATT device and two advertisement sensors (one with a bindkey) are served at once, without a restart, kept retained and in devices_file")
    func add() async throws {
        try await Harness.with(Management.options()) { harness in
            try await harness.waitFor("ble/strap/availability") { $0.payload == "online" }
            let mark = harness.observer.count
            let (reply, transaction) = try await harness.request("device/add", Management.pantryEntry())
            let data = Management.expectOK(reply, "device/add pantry", transaction: transaction)
            #expect(data["device"] as? String == "pantry", "data.device is the new segment: \(reply)")

            try await harness.waitFor("ble/pantry/availability", after: mark) { $0.payload == "online" }
            let temperature = try await harness.waitFor(Management.temperature("pantry"), after: mark)
            let celsius = try #require(JSON.double(temperature.object?["value"]), "\(temperature)")
            #expect(abs(celsius - 7.5) < 5, "the pantry's temperature: \(temperature)")
            try await harness.waitFor(Management.battery("pantry"), after: mark)

            let entry = try await harness.retained("ble/config/devices/pantry")
            #expect(entry.retained, "ble/config/devices/pantry is not retained: \(entry)")
            #expect(Management.isEntry(entry.payload, name: "pantry", address: Management.pantryAddress), "the entry as JSON: \(entry)")
            #expect(JSON.object(entry.payload)?["connection"] as? String == "always", "the entry keeps its connection policy: \(entry)")
            try await harness.waitFor("ble/bridge/devices", after: mark) { message in
                (JSON.array(message.payload) ?? []).contains { ($0 as? [String: Any])?["name"] as? String == "pantry" }
            }

            // Advertisement sensors: a BTHome thermometer, and an encrypted one with its bindkey.
            let beforeSensors = harness.observer.count
            let (porch, porchTransaction) = try await harness.request(
                "device/add", Management.advertisementEntry(name: "porch", address: Management.bthomeAddress))
            Management.expectOK(porch, "device/add porch", transaction: porchTransaction)
            let (cellar, cellarTransaction) = try await harness.request(
                "device/add",
                Management.advertisementEntry(name: "cellar", address: Management.encryptedAddress, bindkey: Management.bindkey))
            Management.expectOK(cellar, "device/add cellar (bindkey)", transaction: cellarTransaction)
            for (segment, expected) in [("porch", 23.0), ("cellar", 12.0)] {
                let message = try await harness.waitFor("ble/\(segment)/advertisement", after: beforeSensors) { message in
                    (message.object?["values"] as? [String: Any])?["temperature"] != nil
                }
                #expect(message.object?["decoder"] as? String == "bthome_v2", "\(message)")
                let value = JSON.double((message.object?["values"] as? [String: Any])?["temperature"]) ?? .nan
                #expect(abs(value - expected) <= 0.6, "\(segment): temperature \(value), the simulator sends \(expected): \(message)")
                try await harness.waitFor("ble/\(segment)/availability", after: beforeSensors) { $0.payload == "online" }
            }
            let cellarPayload = harness.observer.messages("ble/cellar/advertisement").last?.object
            #expect(JSON.bool(cellarPayload?["encrypted"]) == true, "cellar's frames are encrypted: \(cellarPayload ?? [:])")

            // devices_file (default: devices.json beside state_file) holds the three entries.
            let devicesFile = "\(harness.directory)/devices.json"
            try await Management.eventually("devices.json holds pantry, porch and cellar", context: harness.context) {
                Management.entryNames(inFile: devicesFile).isSuperset(of: ["pantry", "porch", "cellar"])
            }
            // Served without a restart, and the advertisement sensors never connected.
            #expect(harness.runningBridge.isRunning, "the bridge ended: \(harness.context())")
            let starts = harness.bridgeLog.split(separator: "\n").filter { $0.contains("starting with") }
            #expect(starts.count == 1, "the bridge started \(starts.count) times")
            let stats = try await harness.simStats()
            for address in [Management.bthomeAddress, Management.encryptedAddress] {
                #expect(stats.count(address, "connect_attempts") == 0, "\(address) is an advertisement device: \(stats.device(address))")
            }
        }
    }

    @Test("a bridge restarted while the broker is down serves the run-time devices from devices_file, republishes them once the broker is back (it lost its retained messages), and keeps them")
    func restartWithoutBroker() async throws {
        try await Harness.with(Management.options()) { harness in
            try await harness.waitFor("ble/strap/availability") { $0.payload == "online" }
            let (pantry, pantryTransaction) = try await harness.request("device/add", Management.pantryEntry())
            Management.expectOK(pantry, "device/add pantry", transaction: pantryTransaction)
            let (porch, porchTransaction) = try await harness.request(
                "device/add", Management.advertisementEntry(name: "porch", address: Management.bthomeAddress))
            Management.expectOK(porch, "device/add porch", transaction: porchTransaction)
            try await harness.waitFor(Management.temperature("pantry"))
            try await harness.waitFor("ble/porch/advertisement")
            let devicesFile = "\(harness.directory)/devices.json"
            try await Management.eventually("devices.json holds pantry and porch", context: harness.context) {
                Management.entryNames(inFile: devicesFile).isSuperset(of: ["pantry", "porch"])
            }

            // The bridge stops, then the broker (without persistence: its retained messages are gone).
            let stopped = await harness.runningBridge.stop(grace: .seconds(10))
            #expect(stopped == .exited(0), "the bridge ended with \(stopped.map(\.description) ?? "nothing")")
            await harness.observer.stop()
            await harness.broker?.stop()
            #expect(
                Management.entryNames(inFile: devicesFile).isSuperset(of: ["pantry", "porch"]),
                "devices.json after the bridge stopped: \(ChildProcess.read(devicesFile))")

            try await Management.eventually("the pantry disconnected after the bridge stopped", context: harness.context) {
                try await !harness.simStats().flag(Management.pantryAddress, "connected")
            }

            // Started with the broker away: it connects the pantry all the same.
            let logOffset = harness.bridgeLog.utf8.count
            try harness.startBridge()
            try await Management.eventually("the pantry connected with the broker down", timeout: .seconds(30), context: harness.context) {
                try await harness.simStats().flag(Management.pantryAddress, "connected")
            }
            #expect(harness.runningBridge.isRunning, "the bridge ended without a broker: \(harness.context())")

            // The broker comes back on the same port, empty: the devices' values, under their names.
            // (The new observer appends to the old one's output: indices go on from `back`.)
            let back = harness.observer.count
            try await harness.startBroker()
            try await harness.waitFor("ble/bridge/state", after: back) { $0.payload == "online" }
            try await harness.waitFor(Management.temperature("pantry"), after: back)
            try await harness.waitFor("ble/porch/advertisement", after: back)
            for name in ["pantry", "porch"] {
                let entry = try await harness.retained("ble/config/devices/\(name)")
                #expect(!entry.payload.isEmpty && JSON.object(entry.payload)?["name"] as? String == name, "republished: \(entry)")
            }
            let logged = harness.bridgeLog(from: logOffset).split(separator: "\n").filter {
                $0.contains("devices_file") || $0.contains("devices.json")
            }
            #expect(!logged.isEmpty, "the bridge logs that it republished its devices_file entries (a line naming devices_file or devices.json)")
            #expect(
                Management.entryNames(inFile: devicesFile).isSuperset(of: ["pantry", "porch"]),
                "devices.json at the end: \(ChildProcess.read(devicesFile))")
        }
    }

    @Test("device/rename: the values move to the new segment, the old retained topics are cleared, Home Assistant's unique_ids stay, the known-peripheral record is kept")
    func rename() async throws {
        try await Harness.with(Management.options(homeAssistant: true)) { harness in
            let ha = try await MQTTObserver.start(
                broker: try #require(harness.broker), filters: ["ha/#"], directory: harness.directory, name: "ha")
            do {
                try await Self.rename(harness, ha)
            } catch {
                await ha.stop()
                throw error
            }
            await ha.stop()
        }
    }

    private static func rename(_ harness: Harness, _ ha: MQTTObserver) async throws {
        try await harness.waitFor("ble/strap/availability") { $0.payload == "online" }
        let (added, addTransaction) = try await harness.request("device/add", Management.pantryEntry())
        Management.expectOK(added, "device/add pantry", transaction: addTransaction)
        try await harness.waitFor("ble/pantry/availability") { $0.payload == "online" }
        try await harness.waitFor(Management.temperature("pantry"))
        let before = try await ha.waitFor(Management.pantryDiscoveryTopic, context: harness.context) {
            JSON.object($0.payload).map { Management.topics($0).contains(Management.temperature("pantry")) } ?? false
        }
        let idsBefore = Management.uniqueIDs(try #require(JSON.object(before.payload)))
        #expect(!idsBefore.isEmpty, "the pantry's Home Assistant config has no components: \(before)")
        let stateFile = "\(harness.directory)/peripherals.json"
        try await Management.eventually("the state file knows the pantry", context: harness.context) {
            Management.knownPeripherals(inFile: stateFile).contains(Management.pantryAddress)
        }

        let mark = harness.observer.count
        let haMark = ha.count
        let (reply, transaction) = try await harness.request("device/rename", ["device": "pantry", "name": "larder"])
        Management.expectOK(reply, "device/rename pantry → larder", transaction: transaction)

        // The values move.
        let moved = try await harness.waitFor(Management.temperature("larder"), after: mark)
        try await harness.waitFor("ble/larder/availability", after: mark) { $0.payload == "online" }
        let availability = try await harness.retained("ble/larder/availability")
        #expect(availability.retained && availability.payload == "online", "\(availability)")
        let entry = try await harness.retained("ble/config/devices/larder")
        #expect(Management.isEntry(entry.payload, name: "larder", address: Management.pantryAddress), "the entry under its new name: \(entry)")
        // The old retained topics are cleared.
        try await harness.expectCleared("ble/pantry/availability", after: mark)
        try await harness.expectCleared("ble/config/devices/pantry", after: mark)
        // Nothing more under the old name (2 s more of larder values: 4 temperatures).
        let values = harness.observer.messages(Management.temperature("larder")).filter { $0.index > moved.index }.count
        try await harness.waitFor(Management.temperature("larder"), after: moved.index + 1) { _ in
            harness.observer.messages(Management.temperature("larder")).filter { $0.index > moved.index }.count >= values + 4
        }
        let stale = harness.observer.messages("ble/pantry/+/+").filter { $0.index > moved.index }
        #expect(stale.isEmpty, "values under the old name after the rename: \(stale.prefix(5))")
        try await harness.waitFor("ble/bridge/devices", after: mark) { message in
            let names = (JSON.array(message.payload) ?? []).compactMap { ($0 as? [String: Any])?["name"] as? String }
            return names.contains("larder") && !names.contains("pantry")
        }

        // Home Assistant: the same config topic (by address), the same unique_ids, the new topics.
        let after = try await ha.waitFor(Management.pantryDiscoveryTopic, after: haMark, context: harness.context) {
            JSON.object($0.payload).map { Management.topics($0).contains(Management.temperature("larder")) } ?? false
        }
        let config = try #require(JSON.object(after.payload))
        #expect(Management.uniqueIDs(config) == idsBefore, "unique_ids before \(idsBefore.sorted()), after \(Management.uniqueIDs(config).sorted())")
        let old = Management.topics(config).filter { $0.hasPrefix("ble/pantry/") }
        #expect(old.isEmpty, "the renamed device's Home Assistant config still names \(old)")

        // The known-peripheral record is kept (it is by address), devices_file has the new name only.
        #expect(Management.knownPeripherals(inFile: stateFile).contains(Management.pantryAddress), "\(ChildProcess.read(stateFile))")
        let devicesFile = "\(harness.directory)/devices.json"
        try await Management.eventually("devices.json holds larder, not pantry", context: harness.context) {
            let names = Management.entryNames(inFile: devicesFile)
            return names.contains("larder") && !names.contains("pantry")
        }
    }

    @Test("device/remove: disconnected and forgotten, its retained topics and Home Assistant configs cleared, its values stop")
    func remove() async throws {
        try await Harness.with(Management.options(homeAssistant: true)) { harness in
            let ha = try await MQTTObserver.start(
                broker: try #require(harness.broker), filters: ["ha/#"], directory: harness.directory, name: "ha")
            do {
                try await Self.remove(harness, ha)
            } catch {
                await ha.stop()
                throw error
            }
            await ha.stop()
        }
    }

    private static func remove(_ harness: Harness, _ ha: MQTTObserver) async throws {
        try await harness.waitFor("ble/strap/availability") { $0.payload == "online" }
        let porchDiscoveryTopic = "ha/device/ble_c0ffee00aa01/config"
        let (pantry, pantryTransaction) = try await harness.request("device/add", Management.pantryEntry())
        Management.expectOK(pantry, "device/add pantry", transaction: pantryTransaction)
        let (porch, porchTransaction) = try await harness.request(
            "device/add", Management.advertisementEntry(name: "porch", address: Management.bthomeAddress))
        Management.expectOK(porch, "device/add porch", transaction: porchTransaction)
        try await harness.waitFor(Management.temperature("pantry"))
        try await harness.waitFor("ble/porch/advertisement")
        for topic in [Management.pantryDiscoveryTopic, porchDiscoveryTopic] {
            try await ha.waitFor(topic, context: harness.context) { !$0.payload.isEmpty }
        }
        let stateFile = "\(harness.directory)/peripherals.json"
        try await Management.eventually("the state file knows the pantry", context: harness.context) {
            Management.knownPeripherals(inFile: stateFile).contains(Management.pantryAddress)
        }

        let mark = harness.observer.count
        let haMark = ha.count
        for name in ["pantry", "porch"] {
            let (reply, transaction) = try await harness.request("device/remove", ["device": name])
            Management.expectOK(reply, "device/remove \(name)", transaction: transaction)
        }
        for name in ["pantry", "porch"] {
            try await harness.expectCleared("ble/\(name)/availability", after: mark)
            try await harness.expectCleared("ble/config/devices/\(name)", after: mark)
        }
        for topic in [Management.pantryDiscoveryTopic, porchDiscoveryTopic] {
            do {
                try await ha.waitFor(topic, after: haMark, timeout: .seconds(15), context: harness.context) { $0.payload.isEmpty }
            } catch {
                Issue.record("the Home Assistant config \(topic) was not cleared: \(error)")
            }
            let left = try await harness.retainedMessage(topic)
            #expect(left == nil, "\(topic) still holds a config: \(left.map(\.description) ?? "")")
        }

        // Disconnected; then 1.5 s of strap values without a value of either.
        try await harness.waitForLine(in: harness.simulatorLogPath, "the pantry disconnected") {
            $0.contains("address=\(Management.pantryAddress)") && $0.hasSuffix(" disconnected")
        }
        let quiet = harness.observer.count
        try await harness.waitFor(Management.strapValues, after: quiet) { _ in
            harness.observer.messages(Management.strapValues).filter { $0.index >= quiet }.count >= 6
        }
        let late = harness.observer.all.dropFirst(quiet).filter {
            MQTTObserver.topic($0.topic, matches: "ble/pantry/+/+") || $0.topic == "ble/porch/advertisement"
        }
        #expect(late.isEmpty, "values after the removal: \(late.prefix(5))")
        try await harness.waitFor("ble/bridge/devices", after: mark) { message in
            let names = (JSON.array(message.payload) ?? []).compactMap { ($0 as? [String: Any])?["name"] as? String }
            return names.contains("strap") && !names.contains("pantry") && !names.contains("porch")
        }

        // Forgotten (SPEC §5), and gone from devices_file.
        try await Management.eventually("the state file forgot the pantry", context: harness.context) {
            !Management.knownPeripherals(inFile: stateFile).contains(Management.pantryAddress)
        }
        let devicesFile = "\(harness.directory)/devices.json"
        try await Management.eventually("devices.json holds neither pantry nor porch", context: harness.context) {
            Management.entryNames(inFile: devicesFile).isDisjoint(with: ["pantry", "porch"])
        }
        #expect(harness.runningBridge.isRunning, "the bridge ended: \(harness.context())")
    }
}
