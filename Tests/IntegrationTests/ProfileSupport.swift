import Foundation
import Testing

/// The devices of scripts/sim/profiles.yaml and a bridge configuration binding them to the
/// shipped profiles (SPEC §15).
enum Profiles {
    /// The profile tests' scenario.
    static var scenario: String { "\(Paths.root)/scripts/sim/profiles.yaml" }

    /// A device entry of the configuration: `name`, the address, the profile and its options.
    struct Entry: Sendable {
        var name: String
        var address: String
        var profile: String
        var options: String? = nil
        var extra: String? = nil
    }

    static let miFlora = Entry(name: "ficus", address: "C4:7C:8D:6A:3E:11", profile: "xiaomi_miflora", extra: "poll_interval: 2s")
    static let lywsd = Entry(name: "thermo", address: "A4:C1:38:2E:51:07", profile: "xiaomi_lywsd03mmc", extra: "poll_interval: 2s")
    static let bot = Entry(name: "bot", address: "E1:2B:3C:4D:5E:6F", profile: "switchbot_bot")
    static let lockedBot = Entry(name: "locked_bot", address: "E1:2B:3C:4D:5E:70", profile: "switchbot_bot", options: "{ password: \"1234\" }")
    static let curtain = Entry(name: "curtain", address: "E1:2B:3C:4D:5E:71", profile: "switchbot_curtain")
    static let blind = Entry(name: "blind", address: "02:4E:A3:C1:00:43", profile: "am43_blind")
    static let eq3 = Entry(name: "radiator", address: "00:1A:22:0E:3B:51", profile: "eq3_thermostat")
    static let wavePlus = Entry(name: "wave", address: "58:93:D8:8B:12:0A", profile: "airthings_wave_plus")
    static let radonEye = Entry(name: "radon", address: "D4:2E:5B:00:03:83", profile: "radoneye_rd200")
    static let ibbq = Entry(name: "grill", address: "C8:1B:4B:0A:77:01", profile: "inkbird_ibbq")
    static let radonEyeV1 = Entry(name: "radon_v1", address: "E5:1F:3A:00:01:59", profile: "radoneye_rd200_v1")

    /// Harness options: the profiles scenario, these entries, and `extra` top-level YAML.
    static func options(_ entries: [Entry], extra: String = "", timeout: String = "10s", homeAssistant: Bool = false) -> HarnessOptions {
        var options = HarnessOptions()
        options.scenario = scenario
        options.config = { port in
            var text = """
                mqtt:
                  url: mqtt://127.0.0.1:\(port)
                  client_id: bridge-under-test
                homeassistant: { discovery: \(homeAssistant) }
                bluetooth:
                  adapter: hci0
                reconnect:
                  initial_delay: 200ms
                  max_delay: 1s
                commands:
                  timeout: \(timeout)
                \(extra)
                devices:

                """
            for entry in entries {
                text += "  - match: { address: \"\(entry.address)\" }\n"
                text += "    name: \(entry.name)\n"
                text += "    profile: \(entry.profile)\n"
                if let options = entry.options { text += "    profile_options: \(options)\n" }
                if let extra = entry.extra { text += "    \(extra)\n" }
            }
            return text
        }
        return options
    }

    /// The next `{base}/{device}/values` message after `mark` whose values satisfy `predicate`.
    @discardableResult
    static func values(
        _ harness: Harness, _ device: String, after mark: Int = 0, timeout: Duration = .seconds(30),
        where predicate: ([String: Any]) -> Bool = { _ in true }
    ) async throws -> [String: Any] {
        let message = try await harness.waitFor("ble/\(device)/values", after: mark, timeout: timeout) { message in
            guard let values = message.object?["values"] as? [String: Any] else { return false }
            return predicate(values)
        }
        let object = try #require(message.object)
        return try #require(object["values"] as? [String: Any], "\(message)")
    }

    /// Publishes `payload` to `{base}/{device}/command/{name}/set` and returns its result.
    static func command(
        _ harness: Harness, _ device: String, _ name: String, _ payload: String = "{}", timeout: Duration = .seconds(30)
    ) async throws -> CommandReply {
        // The bridge subscribes to commands before a session reports its device online: a command published
        // before that is lost (no session, no result).
        try await harness.waitFor("ble/\(device)/availability") { $0.payload == "online" }
        let mark = harness.observer.count
        try await harness.publish("ble/\(device)/command/\(name)/set", payload)
        return try CommandReply(try await harness.waitFor("ble/\(device)/command/\(name)/result", after: mark, timeout: timeout))
    }

    /// Whether `value` is the number `expected` (within 1e-9).
    static func number(_ value: Any?, _ expected: Double) -> Bool {
        guard let actual = JSON.double(value) else { return false }
        return abs(actual - expected) < 1e-9
    }
}
