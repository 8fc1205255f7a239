import BridgeCore
import Testing

@testable import RuntimeCore

/// A device with a profile (SPEC §15): its discovery config carries the profile's entities
/// (design §3), built from the entry's ``DeviceProfileBinding``.
@Suite struct SupervisorCoreProfileDiscoveryTests {
    typealias F = CoreFixture

    static let notify = BluetoothUUID(uuid16: 0xfe51)

    static let profile = DeviceProfile(
        id: "am43", manufacturer: "A-OK", model: "AM43",
        steps: [ProfileStep(.subscribe(characteristic: notify, decode: "settings"))],
        decodes: ["settings": .structure(try! ProfileStruct(format: ">5xBB", fields: [.init("position"), .init("battery")]))],
        commands: [
            ProfileCommand(name: "stop", steps: [ProfileStep(.write(
                characteristic: notify, value: try! ProfileTemplate("00ff00009a0a01cc{xor8|from=4}"), response: nil))]),
            ProfileCommand(name: "set_position", steps: [ProfileStep(.write(
                characteristic: notify, value: try! ProfileTemplate("00ff00009a0d01{100-position|u8}{xor8|from=4}"),
                response: nil))]),
        ],
        cover: ProfileCover(stop: "stop", position: "set_position", positionValue: "position"))

    @Test("a profile device's discovery config has its value sensors, cover, maker and model")
    func profileDevice() throws {
        var config = try F.config(
            "homeassistant: { discovery: true }\ndevices: [{ match: { address: \"\(F.thermo)\" } }]\n")
        config.devices[0].profile = DeviceProfileBinding(profile: Self.profile)
        var core = SupervisorCore(config: config, now: F.at(0))
        let thermo = F.device(F.thermo)
        _ = core.handle(.started(stored: []), now: F.at(0), tree: F.noBlueZ)
        _ = core.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter(), devices: [thermo]))
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(100), tree: F.tree(F.adapter(), devices: [thermo]))
        let mapped = MappedDevice(
            characteristics: [:], services: [], serviceSegments: [], discovery: [], name: "Blind",
            information: DeviceInformation())
        let actions = core.handle(.mapped(path: thermo.path, mapped), now: F.at(200), tree: F.tree(F.adapter(), devices: [thermo]))
        let peripheral = try #require(actions.decisions.lazy.compactMap { action -> HomeAssistantDiscovery.Peripheral? in
            if case .homeAssistantPublish(_, let p, _) = action { p } else { nil }
        }.first, "\(actions.decisions)")
        #expect(peripheral.profile?.id == "am43")

        let message = HomeAssistantDiscovery.deviceConfig(
            peripheral, bridge: .init(clientID: "bridge", version: "1"), topics: TopicMapper(config: config))
        let json = try JSONParser.parse(message.payload)
        #expect(json["device"]?["manufacturer"] == "A-OK")
        #expect(json["device"]?["model"] == "AM43")
        let components = try #require(json["components"])
        #expect(components["val_battery"]?["state_topic"] == "ble/e45f01abcdef/values")
        #expect(components["cover"]?["set_position_topic"] == "ble/e45f01abcdef/command/set_position/set")
        #expect(components["cover"]?["command_topic"] == "ble/e45f01abcdef/command/cover/set")
        #expect(components["cover"]?["payload_open"] == .null)

        // A device without a profile: no profile entities.
        var plain = try F.config("homeassistant: { discovery: true }\ndevices: [{ match: { address: \"\(F.thermo)\" } }]\n")
        plain.devices[0].profile = nil
        var other = SupervisorCore(config: plain, now: F.at(0))
        _ = other.handle(.started(stored: []), now: F.at(0), tree: F.noBlueZ)
        _ = other.handle(.bluezAvailable, now: F.at(0), tree: F.tree(F.adapter(), devices: [thermo]))
        _ = other.handle(.deviceAdded(path: thermo.path), now: F.at(100), tree: F.tree(F.adapter(), devices: [thermo]))
        let none = other.handle(.mapped(path: thermo.path, mapped), now: F.at(200), tree: F.tree(F.adapter(), devices: [thermo]))
        #expect(none.decisions.contains { if case .homeAssistantPublish(_, let p, _) = $0 { p.profile == nil } else { false } })
    }
}
