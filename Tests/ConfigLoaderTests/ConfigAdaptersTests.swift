import Testing

@testable import BridgeCore
@testable import ConfigLoader

/// `bluetooth.adapters` (SPEC §10): parsed and checked with line:column errors; for now one adapter only.
@Suite struct ConfigAdaptersTests {
    static let head = "mqtt:\n  url: mqtt://localhost\n"

    func parse(_ yaml: String) throws(ConfigError) -> BridgeConfig {
        try BridgeConfig.parse(yaml: Self.head + yaml, fileName: "bridge.yaml", environment: [:], hostName: "h")
    }

    func failure(_ yaml: String) -> ConfigError? {
        do throws(ConfigError) {
            _ = try parse(yaml)
            return nil
        } catch {
            return error
        }
    }

    @Test func defaultIsTheOneAdapter() throws {
        let plain = try parse("")
        #expect(plain.bluetooth.adapters == nil)
        #expect(plain.bluetooth.adapterSelection == .named(["hci0"]))
        let named = try parse("bluetooth: { adapter: hci2 }\n")
        #expect(named.bluetooth.adapterSelection == .named(["hci2"]))
        // One hysteresis between adapters and between bridges (SPEC §10): `cluster.switch_*`.
        let tuned = try parse("cluster: { switch_margin: 6, switch_after: 5s }\n")
        #expect(tuned.cluster.switchRule == SwitchRule(margin: 6, after: .seconds(5)))
    }

    @Test func oneAdapterListIsThatAdapter() throws {
        let config = try parse("bluetooth:\n  adapters: [/org/bluez/hci1]\n  max_connections: 3\n")
        #expect(config.bluetooth.adapters == .named(["hci1"]))
        #expect(config.bluetooth.adapter == "hci1")
        #expect(config.bluetooth.adapterPath == "/org/bluez/hci1")
        #expect(config.bluetooth.maxConnections == 3)
        let block = try parse("bluetooth:\n  adapters:\n    - hci3\n")
        #expect(block.bluetooth.adapter == "hci3")
        // Both keys, agreeing.
        let both = try parse("bluetooth:\n  adapter: hci1\n  adapters: [hci1]\n")
        #expect(both.bluetooth.adapters == .named(["hci1"]))
        #expect(both.bluetooth.adapter == "hci1")
    }

    /// Several adapters (or `all`) are accepted: the runtime drives each (SPEC §10).
    @Test func severalAdaptersAndAll() throws {
        let several = try parse("bluetooth:\n  adapters: [hci1, hci0]\n")
        #expect(several.bluetooth.adapters == .named(["hci1", "hci0"]))
        #expect(several.bluetooth.adapterSelection == .named(["hci1", "hci0"]))
        #expect(several.bluetooth.adapter == "hci1", "adapter names the first one listed")
        let all = try parse("bluetooth:\n  adapters: all\n")
        #expect(all.bluetooth.adapterSelection == .all)
        #expect(all.bluetooth.adapter == "hci0")
        let allWithAdapter = try parse("bluetooth:\n  adapter: hci2\n  adapters: all\n")
        #expect(allWithAdapter.bluetooth.adapterSelection == .all)
        #expect(allWithAdapter.bluetooth.adapter == "hci2")
        // Both keys must still agree.
        #expect(failure("bluetooth:\n  adapter: hci2\n  adapters: [hci0, hci1]\n")?.code == .invalidValue)
    }

    @Test func invalidAdapters() {
        let cases: [(yaml: String, message: String, code: ConfigError.Code)] = [
            ("bluetooth:\n  adapters: []\n",
             "bridge.yaml:4:13: 'bluetooth.adapters' must name at least one adapter (or be all)", .invalidValue),
            ("bluetooth:\n  adapters: every\n",
             "bridge.yaml:4:13: 'bluetooth.adapters' must be a list of adapters (such as [hci0, hci1]) or all, not 'every'",
             .wrongType),
            ("bluetooth:\n  adapters: [hci0, \"hci 1\"]\n",
             "bridge.yaml:4:20: invalid adapter 'hci 1' (expected a name like hci0 or a path like /org/bluez/hci0)",
             .invalidValue),
            ("bluetooth:\n  adapters: [hci0, /org/bluez/hci0]\n",
             "bridge.yaml:4:20: adapter 'hci0' is listed twice in 'bluetooth.adapters'", .duplicateName),
            ("bluetooth:\n  adapters: [all]\n",
             "bridge.yaml:4:14: 'all' is not an adapter: write 'bluetooth.adapters: all' without a list", .invalidValue),
            ("bluetooth:\n  adapter: hci2\n  adapters: [hci0]\n",
             "bridge.yaml:4:12: 'bluetooth.adapter' (hci2) is not one of 'bluetooth.adapters'; set one of them", .invalidValue),
            ("bluetooth:\n  adapters: { hci0: 1 }\n",
             "bridge.yaml:4:13: expected a list for 'bluetooth.adapters', found a mapping", .wrongType),
        ]
        for c in cases {
            let error = failure(c.yaml)
            #expect(error?.description == c.message, "\(c.yaml)")
            #expect(error?.code == c.code, "\(c.yaml)")
        }
    }

    @Test func adaptersIsAKnownKey() {
        #expect(ConfigKeys.allPaths.contains("bluetooth.adapters"))
        let typo = failure("bluetooth:\n  adaptors: [hci0]\n")
        #expect(typo?.code == .unknownKey)
    }
}
