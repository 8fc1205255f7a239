import Testing

@testable import BridgeCore
@testable import ConfigLoader

/// A device entry's `profile` and `profile_options` (SPEC §15): the binding, the options checked,
/// the connection the profile implies, and the `command` service segment reserved.
@Suite struct ProfileBindingTests {
    static let sensor = """
        id: sensor
        connection: poll
        interval: 10m
        options: { pin: { type: integer } }
        steps:
          - write: { characteristic: "fff1", value: "{options.pin|u16le}" }

        """

    static func catalog() throws -> [String: DeviceProfile] {
        var profiles = try ProfileCatalog.shipped().profiles
        for yaml in [ProfileLoaderTests.bot, sensor] {
            let profile = try ProfileCatalog.parseProfile(yaml: yaml, fileName: "user.yaml")
            profiles[profile.id] = profile
        }
        return profiles
    }

    static func parse(_ devices: String, environment: [String: String] = [:]) throws(ConfigError) -> BridgeConfig {
        let profiles: [String: DeviceProfile]
        do { profiles = try catalog() } catch { fatalError("\(error)") }
        return try BridgeConfig.parse(
            yaml: "mqtt:\n  url: mqtt://localhost\ndevices:\n" + devices, fileName: "bridge.yaml", environment: environment,
            hostName: "h", profiles: profiles)
    }

    static func failure(_ devices: String) -> String? {
        do throws(ConfigError) {
            _ = try parse(devices)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func shippedProfilesWithoutFileAccess() throws {
        let config = try BridgeConfig.parse(
            yaml: "mqtt:\n  url: mqtt://localhost\nprofiles_dir: /nonexistent\ndevices:\n  - { match: { address: \"C4:7C:8D:6A:3E:11\" }, profile: xiaomi_miflora }\n",
            environment: [:], hostName: "h")
        #expect(config.profilesDir == "/nonexistent")
        #expect(config.profiles.keys.sorted() == ShippedProfiles.all.map(\.id).sorted())
        let device = try #require(config.devices.first)
        #expect(device.profile?.id == "xiaomi_miflora")
        // The profile's poll connection and interval.
        #expect(device.connection == .poll(interval: .seconds(1800), listen: .zero))
        #expect(device.profile?.steps.count == 3)
    }

    @Test func pollIntervalOverridesTheProfile() throws {
        let config = try Self.parse(
            "  - { match: { address: \"C4:7C:8D:6A:3E:11\" }, profile: xiaomi_miflora, poll_interval: 5m, listen: 10s }\n")
        #expect(config.devices[0].connection == .poll(interval: .seconds(300), listen: .seconds(10)))
        // `connection: always` keeps a poll profile's device connected.
        let always = try Self.parse(
            "  - { match: { address: \"C4:7C:8D:6A:3E:11\" }, profile: xiaomi_miflora, connection: always }\n")
        #expect(always.devices[0].connection == .always)
    }

    @Test func advertisementWithAProfileIsRefused() {
        #expect(
            Self.failure("  - { match: { address: \"C4:7C:8D:6A:3E:11\" }, profile: xiaomi_miflora, connection: advertisement }\n")
                == "bridge.yaml:4:85: 'connection: advertisement' does not go with 'profile' (xiaomi_miflora connects: use always or poll)")
    }

    @Test func unknownProfileHasASuggestion() {
        #expect(
            Self.failure("  - { match: { address: \"C4:7C:8D:6A:3E:11\" }, profile: xiaomi_miflor }\n")
                == "bridge.yaml:4:57: unknown profile 'xiaomi_miflor' (did you mean 'xiaomi_miflora'?)")
    }

    /// `if:`/`unless:` are decided at load: with a password the press writes its CRC, without it `570101`.
    @Test func optionsSelectTheSteps() throws {
        let config = try Self.parse(
            """
              - match: { address: "E1:2B:3C:4D:5E:6F" }
                profile: bot
                profile_options: { password: "${BOT_PASSWORD}" }
              - match: { address: "E1:2B:3C:4D:5E:70" }
                profile: bot

            """, environment: ["BOT_PASSWORD": "1234"])
        let withPassword = try #require(config.devices[0].profile)
        #expect(withPassword.options == ["password": "1234"])
        let press = try #require(withPassword.command("press"))
        #expect(press.steps.map(\.condition) == [.ifSet("password")])
        #expect(try press.steps.map { step throws in
            guard case .write(_, let template, _) = step.action else { return [UInt8]() }
            return try template.render(.init(unixTime: 0, options: withPassword.options))
        } == [[0x57, 0x11, 0x9b, 0xe3, 0xe0, 0xa3, 0x01] as [UInt8]])
        let without = try #require(config.devices[1].profile)
        #expect(without.options == [:])
        #expect(without.command("press")?.steps.map(\.condition) == [.unlessSet("password")])
        #expect(without.steps.count == 1)
        #expect(config.devices[1].connection == .always)
    }

    @Test func profileOptionsAreChecked() {
        #expect(
            Self.failure("  - { match: { address: \"E1:2B:3C:4D:5E:6F\" }, profile: bot, profile_options: { pasword: x } }\n")
                == "bridge.yaml:4:81: profile 'bot' has no option 'pasword' (did you mean 'password'?)")
        #expect(
            Self.failure("  - { match: { address: \"E1:2B:3C:4D:5E:6F\" }, profile: sensor }\n")
                == "bridge.yaml:4:48: profile 'sensor' needs option 'pin' in 'profile_options'")
        #expect(
            Self.failure("  - { match: { address: \"E1:2B:3C:4D:5E:6F\" }, profile: sensor, profile_options: { pin: 12a } }\n")
                == "bridge.yaml:4:89: expected an integer for 'devices[0].profile_options.pin' (option of profile 'sensor'), found '12a'")
        #expect(
            Self.failure("  - { match: { address: \"E1:2B:3C:4D:5E:6F\" }, profile_options: { pin: 1 } }\n")
                == "bridge.yaml:4:48: 'devices[0].profile_options' needs 'profile'")
    }

    @Test func aServiceNamedCommandIsRefused() {
        #expect(
            Self.failure("  - { match: { address: \"E1:2B:3C:4D:5E:6F\" }, services: [ { uuid: \"fff0\", name: command } ] }\n")
                == "bridge.yaml:4:82: invalid name 'command' for 'devices[0].services[0].name': 'command' is reserved for profile commands ({device}/command/{name})")
    }
}
