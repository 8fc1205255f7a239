import ConfigLoader
import Testing

@testable import BridgeCore

/// `trackers` (SPEC §12): decoding and the errors, located like the rest of the configuration.
@Suite struct PresenceConfigTests {
    func parse(_ yaml: String) throws(ConfigError) -> BridgeConfig {
        try BridgeConfig.parse(yaml: "mqtt: { url: mqtt://b }\n" + yaml, fileName: "bridge.yaml", environment: ["IRK": "ec0234a357c8ad05341010a60a397d9b"], hostName: "h")
    }

    func message(_ yaml: String) -> String? {
        do {
            _ = try parse(yaml)
            return nil
        } catch {
            return error.description
        }
    }

    func errors(_ yaml: String) -> [String] {
        do {
            _ = try parse(yaml)
            return []
        } catch {
            return error.all.map(\.description)
        }
    }

    @Test func parsed() throws {
        let config = try parse(
            """
            trackers:
              - name: alice_phone
                match: { irk: "${IRK}" }
                away_after: 5m
              - { name: keys, match: { ibeacon: "fda50693-a4e2-4fb1-afcf-c6eb07647825:1:2" } }
              - { name: tag, match: { address: "c0:ff:ee:00:00:09" } }
            """)
        #expect(config.trackers.map(\.name) == ["alice_phone", "keys", "tag"])
        #expect(config.trackers[0].match == .irk(IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b")!))
        #expect(config.trackers[0].awayAfter == .seconds(300))
        #expect(
            config.trackers[1].match
                == .iBeacon(.init(uuid: BluetoothUUID("fda50693-a4e2-4fb1-afcf-c6eb07647825")!, major: 1, minor: 2)))
        #expect(config.trackers[1].awayAfter == .seconds(120))
        #expect(config.trackers[2].match == .address(BluetoothAddress("C0:FF:EE:00:00:09")!))
        #expect(try parse("").trackers.isEmpty)
    }

    @Test func refused() {
        let cases: [(String, String)] = [
            ("trackers: [{ match: { address: \"C0:FF:EE:00:00:09\" } }]", "bridge.yaml:2:12: missing required key 'name' in 'trackers[0]'"),
            ("trackers: [{ name: a }]", "missing required key 'match' in 'trackers[0]'"),
            ("trackers: [{ name: a, match: {} }]", "'trackers[0].match' needs one of 'address', 'ibeacon' or 'irk'"),
            (
                "trackers: [{ name: a, match: { address: \"C0:FF:EE:00:00:09\", irk: \"ec0234a357c8ad05341010a60a397d9b\" } }]",
                "'trackers[0].match' takes one of 'address', 'ibeacon' or 'irk', not 'address' and 'irk'"
            ),
            ("trackers: [{ name: a, match: { name: \"Phone*\" } }]", "unknown key 'name' in 'trackers[0].match'"),
            ("trackers: [{ name: a, match: { address: \"C0:FF:EE\" } }]", "invalid Bluetooth address 'C0:FF:EE'"),
            ("trackers: [{ name: a, match: { irk: \"ec0234\" } }]", "bridge.yaml:2:37: 'trackers[0].match.irk' must be 32 hex digits"),
            ("trackers: [{ name: a, match: { ibeacon: \"fda50693:1:2\" } }]", "invalid iBeacon 'fda50693:1:2' for 'trackers[0].match.ibeacon'"),
            ("trackers: [{ name: a/b, match: { address: \"C0:FF:EE:00:00:09\" } }]", "invalid name 'a/b' for 'trackers[0].name'"),
            ("trackers: [{ name: bridge, match: { address: \"C0:FF:EE:00:00:09\" } }]", "reserved for the bridge's own topics"),
            ("trackers: [{ name: a, match: { address: \"C0:FF:EE:00:00:09\" }, away_after: 0s }]", "'trackers[0].away_after' must be at least 1s"),
            ("trackers: [{ name: a, match: { address: \"C0:FF:EE:00:00:09\" }, connection: poll }]", "unknown key 'connection' in 'trackers[0]'"),
            ("trackers: { name: a }", "expected a list for 'trackers'"),
        ]
        for (yaml, expected) in cases {
            let text = message(yaml + "\n")
            #expect(text?.contains(expected) == true, "\(yaml) → \(text ?? "no error")")
        }
    }

    @Test func irkErrorNeverShowsTheKey() {
        let text = message("trackers: [{ name: a, match: { irk: \"ec0234a357c8ad05341010a60a397d9bff\" } }]\n")
        #expect(text?.contains("found 34 characters") == true)
        #expect(text?.contains("ec0234") == false)
    }

    @Test func namesAndMatchesAreUnique() {
        let duplicate = """
            trackers:
              - { name: a, match: { address: "C0:FF:EE:00:00:09" } }
              - { name: a, match: { address: "C0:FF:EE:00:00:0A" } }
            """
        #expect(message(duplicate)?.contains("bridge.yaml:4:13: duplicate tracker name 'a' (first used at line 3)") == true)
        let sameMatch = """
            trackers:
              - { name: a, match: { irk: "ec0234a357c8ad05341010a60a397d9b" } }
              - { name: b, match: { irk: "EC0234A357C8AD05341010A60A397D9B" } }
            """
        #expect(message(sameMatch)?.contains("another tracker has the same match (irk) at line 3") == true)
        let deviceName = """
            devices: [{ match: { address: "C8:12:34:56:78:9A" }, name: chest }, { match: { address: "C8:12:34:56:78:9B" } }]
            trackers:
              - { name: chest, match: { address: "C0:FF:EE:00:00:09" } }
              - { name: c8123456789b, match: { address: "C0:FF:EE:00:00:0A" } }
            """
        let all = errors(deviceName)
        #expect(all.count == 2)
        #expect(all.first?.contains("tracker name 'chest' is already a device's topic segment") == true)
        #expect(all.last?.contains("tracker name 'c8123456789b' is already a device's topic segment") == true)
    }

    @Test func everyEntryIsChecked() {
        let all = errors(
            """
            trackers:
              - { name: a, match: { irk: "00" } }
              - { name: b, match: { ibeacon: "x" } }
            """)
        #expect(all.count == 2)
    }
}
