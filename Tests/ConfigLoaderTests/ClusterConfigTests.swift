import ConfigLoader
import Testing

@testable import BridgeCore

/// `bridge.id` and `cluster.*` (SPEC §10): defaults, values, located errors, the host-name-derived id, and the
/// refusal of `cluster.enabled: true` until the runtime implements the cluster.
@Suite struct ClusterConfigTests {
    static let head = "mqtt:\n  url: mqtt://localhost\n"

    func parse(_ yaml: String, hostName: String = "h") throws(ConfigError) -> BridgeConfig {
        try BridgeConfig.parse(yaml: Self.head + yaml, fileName: "bridge.yaml", environment: ["ID": "attic"], hostName: hostName)
    }

    func failure(_ yaml: String) -> ConfigError? {
        do {
            _ = try parse(yaml)
            return nil
        } catch {
            return error
        }
    }

    func expectError(
        _ yaml: String, _ expected: String, code: ConfigError.Code, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let error = failure(yaml)
        #expect(error?.description == expected, sourceLocation: sourceLocation)
        #expect(error?.code == code, sourceLocation: sourceLocation)
    }

    @Test func defaults() throws {
        let config = try parse("", hostName: "Kitchen")
        #expect(config.bridgeID == "kitchen")
        #expect(config.cluster == BridgeConfig.Cluster())
        #expect(config.cluster.enabled == false)
        #expect(config.cluster.switchRule.margin == 10)
        #expect(config.cluster.switchRule.after == .seconds(30))
        #expect(config.unsupported.isEmpty)
        #expect(throws: Never.self) { try config.checkSupported() }
        // Empty sections are the defaults too.
        let empty = try parse("bridge:\ncluster:\n", hostName: "Kitchen")
        #expect(empty.bridgeID == "kitchen")
        #expect(empty.cluster == BridgeConfig.Cluster())
    }

    @Test func configuredValues() throws {
        let config = try parse(
            "bridge:\n  id: garage-2_b\ncluster:\n  enabled: false\n  switch_margin: 6\n  switch_after: 1m30s\n")
        #expect(config.bridgeID == "garage-2_b")
        #expect(config.cluster.enabled == false)
        #expect(config.cluster.switchRule == SwitchRule(margin: 6, after: .seconds(90)))
        #expect(try parse("bridge: { id: \"${ID}\" }\n").bridgeID == "attic")
        #expect(try parse("cluster: { switch_margin: 1, switch_after: 1s }\n").cluster.switchRule == SwitchRule(margin: 1, after: .seconds(1)))
        #expect(try parse("cluster: { switch_margin: 100 }\n").cluster.switchRule.margin == 100)
        #expect(try parse("bridge: { id: \(String(repeating: "a", count: 64)) }\n").bridgeID.utf8.count == 64)
    }

    @Test func clusterSettingsFromConfig() throws {
        let config = try parse("bridge: { id: kitchen }\ncluster: { switch_margin: 16, switch_after: 45s }\n")
        let settings = ClusterSettings(config: config)
        #expect(settings.bridgeID == "kitchen")
        #expect(settings.switchRule == SwitchRule(margin: 16, after: .seconds(45)))
        // The SPEC's fixed timings are kept.
        #expect(settings == ClusterSettings(bridgeID: "kitchen", switchRule: SwitchRule(margin: 16, after: .seconds(45))))
        #expect(settings.claimWait == .seconds(1))
        #expect(ClusterSettings(config: try parse("", hostName: "Pi.Garage")).bridgeID == "pi-garage")
    }

    @Test func invalidBridgeIDs() {
        expectError(
            "bridge:\n  id: Kitchen\n",
            "bridge.yaml:4:7: invalid bridge id 'Kitchen' for 'bridge.id': expected 1 to 64 characters from a-z, 0-9, '_' and '-' (did you mean 'kitchen'?)",
            code: .invalidValue)
        expectError(
            "bridge:\n  id: living room\n",
            "bridge.yaml:4:7: invalid bridge id 'living room' for 'bridge.id': expected 1 to 64 characters from a-z, 0-9, '_' and '-' (did you mean 'living-room'?)",
            code: .invalidValue)
        expectError(
            "bridge:\n  id: \"a/b\"\n",
            "bridge.yaml:4:7: invalid bridge id 'a/b' for 'bridge.id': expected 1 to 64 characters from a-z, 0-9, '_' and '-' (did you mean 'a-b'?)",
            code: .invalidValue)
        expectError(
            "bridge:\n  id: \"\"\n",
            "bridge.yaml:4:7: invalid bridge id '' for 'bridge.id': expected 1 to 64 characters from a-z, 0-9, '_' and '-'",
            code: .invalidValue)
        expectError(
            "bridge:\n  id: \"+\"\n",
            "bridge.yaml:4:7: invalid bridge id '+' for 'bridge.id': expected 1 to 64 characters from a-z, 0-9, '_' and '-'",
            code: .invalidValue)
        let long = String(repeating: "a", count: 65)
        expectError(
            "bridge: { id: \(long) }\n",
            "bridge.yaml:3:15: invalid bridge id '\(long)' for 'bridge.id': expected 1 to 64 characters from a-z, 0-9, '_' and '-' (did you mean '\(long.dropLast())'?)",
            code: .invalidValue)
        expectError("bridge:\n  id: [a]\n", "bridge.yaml:4:7: expected a string for 'bridge.id', found a list", code: .wrongType)
        expectError("bridge: kitchen\n", "bridge.yaml:3:9: expected a mapping for 'bridge', found 'kitchen'", code: .wrongType)
        expectError(
            "bridge:\n  name: kitchen\n", "bridge.yaml:4:3: unknown key 'name' in 'bridge' (known keys: id)", code: .unknownKey)
    }

    @Test func invalidClusterValues() {
        expectError(
            "cluster:\n  enabled: maybe\n",
            "bridge.yaml:4:12: expected a boolean (true or false) for 'cluster.enabled', found 'maybe'", code: .wrongType)
        expectError(
            "cluster:\n  switch_margin: 0\n",
            "bridge.yaml:4:18: 'cluster.switch_margin' must be between 1 and 100, not 0", code: .invalidValue)
        expectError(
            "cluster:\n  switch_margin: -5\n",
            "bridge.yaml:4:18: 'cluster.switch_margin' must be between 1 and 100, not -5", code: .invalidValue)
        expectError(
            "cluster:\n  switch_margin: 7.5\n",
            "bridge.yaml:4:18: expected an integer for 'cluster.switch_margin', found '7.5'", code: .wrongType)
        expectError(
            "cluster:\n  switch_after: 500ms\n",
            "bridge.yaml:4:17: 'cluster.switch_after' must be at least 1s", code: .invalidDuration)
        expectError(
            "cluster:\n  switch_after: 30\n",
            "bridge.yaml:4:17: \(durationMessage("30")) for 'cluster.switch_after'", code: .invalidDuration)
        expectError(
            "cluster:\n  switch_margn: 5\n",
            "bridge.yaml:4:3: unknown key 'switch_margn' in 'cluster' (did you mean 'switch_margin'?)", code: .unknownKey)
    }

    /// The duration parser's own message for `text`.
    func durationMessage(_ text: String) -> String {
        do {
            _ = try DurationSyntax.parse(text)
            return "(parsed)"
        } catch {
            return error.message
        }
    }

    /// Errors in several sections are all reported, the new ones included.
    @Test func reportsEveryError() {
        let error = failure("bridge: { id: X }\ncluster: { switch_margin: 0 }\nlog_level: loud\n")
        #expect(error?.all.map(\.line).sorted() == [3, 4, 5])
    }

    @Test func enabledClusterIsAccepted() throws {
        let config = try parse("bridge: { id: kitchen }\ncluster:\n  enabled: true\n  switch_margin: 12\n")
        #expect(config.cluster.enabled)
        #expect(config.cluster.switchRule.margin == 12)
        #expect(config.unsupported.isEmpty)
        #expect(throws: Never.self) { try config.checkSupported() }
        for yes in ["yes", "on", "\"true\""] { #expect(try parse("cluster: { enabled: \(yes) }\n").cluster.enabled) }
        #expect(try parse("cluster: { enabled: false }\n").cluster.enabled == false)
    }

    @Test(arguments: [
        ("kitchen", "kitchen"),
        ("Kitchen", "kitchen"),
        ("KITCHEN-PI_2", "kitchen-pi_2"),
        ("pi.kitchen.lan", "pi-kitchen-lan"),
        ("Pi.Kitchen.LAN.", "pi-kitchen-lan"),
        (".hidden", "hidden"),
        ("pi 4 (garage)", "pi-4-garage"),
        ("Küche", "k-che"),
        ("büro", "b-ro"),
        ("-x-", "-x-"),
        ("", "localhost"),
        (".", "localhost"),
        ("...", "localhost"),
        ("ÄÖÜ", "localhost"),
        (String(repeating: "Ab", count: 40), String(repeating: "ab", count: 32)),
    ])
    func idFromHostName(host: String, id: String) throws {
        #expect(BridgeID.derived(fromHostName: host) == id)
        #expect(BridgeID.isValid(id))
        #expect(try parse("", hostName: host).bridgeID == id)
    }

    /// Whatever the host name, the derived id is valid.
    @Test func derivedIDsAreAlwaysValid() {
        var random = SplitMix64(seed: 17)
        let alphabet = Array("aZ09_-. ü/+#\t\u{0}é😀".unicodeScalars)
        for _ in 0..<2000 {
            let length = Int(random.next() % 80)
            var host = String.UnicodeScalarView()
            for _ in 0..<length { host.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            let id = BridgeID.derived(fromHostName: String(host))
            #expect(BridgeID.isValid(id), "host \(String(host).debugDescription) → \(id)")
        }
    }

    @Test func reservedDeviceNames() {
        for name in ["bridge", "bridges"] {
            expectError(
                "devices:\n  - match: { name: x }\n    name: \(name)\n",
                "bridge.yaml:5:11: invalid name '\(name)' for 'devices[0].name': '\(name)' is reserved for the bridge's own topics",
                code: .invalidName)
        }
        #expect(throws: Never.self) { try parse("devices:\n  - match: { name: x }\n    name: bridges2\n") }
    }
}

/// The client id of a cluster member.
@Suite struct ClusterClientIDTests {
    func parse(_ yaml: String) throws -> BridgeConfig {
        try BridgeConfig.parse(yaml: yaml, fileName: "bridge.yaml", environment: [:], hostName: "pi")
    }

    @Test func clusterMembersDefaultToTheirBridgeID() throws {
        let clustered = try parse("mqtt: { url: mqtt://b }\nbridge: { id: garage }\ncluster: { enabled: true }\n")
        #expect(clustered.mqtt.clientID == "ble-mqtt-bridge-garage")
        let named = try parse("mqtt: { url: mqtt://b, client_id: mine }\nbridge: { id: garage }\ncluster: { enabled: true }\n")
        #expect(named.mqtt.clientID == "mine")
        let single = try parse("mqtt: { url: mqtt://b }\nbridge: { id: garage }\n")
        #expect(single.mqtt.clientID == "ble-mqtt-bridge-pi")
    }
}
