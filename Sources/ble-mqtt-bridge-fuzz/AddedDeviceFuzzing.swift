import BridgeBase
import BridgeCore
import ConfigLoader
import RuntimeCore

/// The `added-device` target (SPEC §14, issue 29): a device entry that arrives from the network, as a
/// `device/add` payload, a retained `{base}/config/devices/{segment}` message or a `devices_file` entry.
///
/// The input is JSON text. It goes through ``BridgeConfig/decodeAddedDevice(_:)`` on a configuration parsed once
/// (one bridge.yaml device, the shipped profiles); an entry it accepts must survive its own JSON (what the bridge
/// publishes retained and another bridge decodes again): the same device, named by a valid topic segment.
/// Then, on a copy of a scanning ``SupervisorCore`` made once: the bytes as `config/devices/{segment}` (the
/// segment: the entry's `name` when it is a string), as a `device/add` request (an accepted add must be answered
/// with the device's segment and be served), then as `device/rename` and `device/remove` requests on that core;
/// and, when the JSON is an array, as the entries of `devices_file`.
enum AddedDeviceFuzzing {
    typealias Core = SupervisorCore<BridgeInstant>

    static let kitchen = "E4:5F:01:AB:CD:EF"

    static let config: BridgeConfig = {
        let yaml = """
            mqtt: { url: "mqtt://127.0.0.1:1" }
            devices: [{ match: { address: "\(kitchen)" }, name: kitchen }]
            trackers: [{ name: alice, match: { address: "4A:11:22:33:44:55" } }]
            """
        do {
            return try BridgeConfig.parse(yaml: yaml, fileName: "fuzz.yaml", environment: [:], hostName: "fuzz")
        } catch {
            preconditionFailure("the fuzz configuration does not load: \(error)")
        }
    }()

    static func at(_ ms: Int64) -> BridgeInstant { BridgeInstant(offset: .milliseconds(ms)) }

    static let scanningTree = Core.Tree(
        bluezAvailable: true,
        adapters: ["hci0": .init(powered: true, discovering: true, address: "00:1A:7D:DA:71:13", offersMonitor: false)])

    /// A core with bridge.yaml's `kitchen`, scanning on hci0, with ConfigLoader's decoder (as
    /// Tests/RuntimeCoreTests/SupervisorCoreManagementTests.swift's `core()`).
    static let core: Core = {
        var core = fresh()
        _ = core.handle(.started(stored: []), now: at(0), tree: Core.Tree(bluezAvailable: false))
        let tree = Core.Tree(
            bluezAvailable: true,
            adapters: ["hci0": .init(powered: true, discovering: false, address: "00:1A:7D:DA:71:13", offersMonitor: false)])
        _ = core.handle(.bluezAvailable, now: at(0), tree: tree)
        _ = core.handle(.discoveryFinished(adapter: "hci0", error: nil), now: at(100), tree: scanningTree)
        return core
    }()

    /// A core of ``config`` that decodes run-time entries with ConfigLoader's decoder, not started.
    static func fresh() -> Core {
        var core = Core(config: config, now: at(0))
        let config = config
        core.decodeAddedDevice = { json throws(ConfigError) in try config.decodeAddedDevice(json) }
        return core
    }

    static func run(_ bytes: [UInt8]) {
        guard let json = try? JSONParser.parse(bytes) else {
            // Not JSON: the core must refuse the request and ignore the retained message.
            var core = core
            _ = core.handle(.configDevice(segment: "fuzz", payload: bytes), now: at(1000), tree: scanningTree)
            let answer = response(core.handle(.request(command: "device/add", payload: bytes), now: at(1100), tree: scanningTree))
            precondition(bytes.isEmpty || answer?.errorCode == .invalidPayload, "non-JSON device/add was not refused")
            precondition(core.added.segments.isEmpty, "non-JSON served a device")
            return
        }
        decode(json)
        drive(bytes, json: json)
    }

    /// The decoder alone, and the round trip through the entry's own JSON.
    static func decode(_ json: JSONValue) {
        let device: BridgeConfig.Device
        do {
            device = try config.decodeAddedDevice(json)
        } catch {
            precondition(!error.message.isEmpty, "a refusal without a message")
            return
        }
        guard let name = device.name else { preconditionFailure("an entry without a name was accepted") }
        precondition(TopicMapper.segmentProblem(name) == nil, "an accepted name is not a topic segment: '\(name)'")
        guard let again = try? JSONParser.parse(json.jsonBytes) else {
            preconditionFailure("an accepted entry's JSON does not parse again")
        }
        do {
            let redecoded = try config.decodeAddedDevice(again)
            precondition(redecoded == device, "an accepted entry decodes differently from its own JSON")
        } catch {
            preconditionFailure("an accepted entry's own JSON is refused: \(error.message)")
        }
    }

    /// The bytes through the supervisor: retained entry, device/add, rename, remove, devices_file.
    static func drive(_ bytes: [UInt8], json: JSONValue) {
        var segment = "fuzz"
        if case .object(let object) = json, let name = object["name"]?.stringValue, !name.isEmpty { segment = name }
        var retained = core
        _ = retained.handle(.configDevice(segment: segment, payload: bytes), now: at(1000), tree: scanningTree)
        precondition(retained.added.segments.allSatisfy { $0 == segment }, "a retained entry was served under another name")
        _ = retained.handle(.configDevice(segment: segment, payload: []), now: at(1100), tree: scanningTree)
        precondition(retained.added.segments.isEmpty, "an emptied retained entry is still served")

        var core = core
        let added = response(core.handle(.request(command: "device/add", payload: bytes), now: at(2000), tree: scanningTree))
        guard let added else { preconditionFailure("device/add was not answered") }
        if added.errorCode == nil {
            guard case .device(let name, _) = added.body else { preconditionFailure("an accepted add does not name its device") }
            precondition(core.added[name] != nil, "an accepted add is not served")
            precondition(core.config.devices.contains { $0.name == name }, "an accepted add is not in the device set")
        } else {
            precondition(core.added.segments.isEmpty, "a refused add was served")
        }
        _ = core.handle(.request(command: "device/rename", payload: bytes), now: at(3000), tree: scanningTree)
        _ = core.handle(.request(command: "device/remove", payload: bytes), now: at(4000), tree: scanningTree)

        if case .array(let entries) = json {
            var loaded = fresh()
            var out: [Core.Action] = []
            loaded.loadAdded(entries, &out)
            _ = loaded.handle(.started(stored: []), now: at(0), tree: Core.Tree(bluezAvailable: false))
            _ = loaded.handle(.bluezAvailable, now: at(0), tree: scanningTree)
        }
    }

    static func response(_ actions: [Core.Action]) -> Core.Response? {
        actions.lazy.compactMap { if case .respond(let r) = $0 { r } else { nil } }.first
    }
}
