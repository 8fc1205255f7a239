import ConfigLoader
import Testing

@testable import BridgeCore

/// SPEC §3 and §6 additions: connection policies, slots, only_services, GAP/GATT internals,
/// Device Information strings.
@Suite struct RuntimeV2ConfigTests {
    func parse(_ yaml: String) throws -> BridgeConfig {
        try BridgeConfig.parse(yaml: "mqtt: { url: mqtt://h }\n" + yaml, fileName: "b.yaml", environment: [:], hostName: "h")
    }

    func failure(_ yaml: String) -> String {
        do {
            _ = try parse(yaml)
            return "no error"
        } catch let error as ConfigError {
            return error.description
        } catch {
            return "\(error)"
        }
    }

    @Test func defaults() throws {
        let c = try parse("devices:\n  - match: { address: \"C8:12:34:56:78:9A\" }\n")
        #expect(c.bluetooth.maxConnections == 7)
        #expect(c.bluetooth.advertisements == .off)
        #expect(c.devices[0].connection == .always)
        #expect(c.devices[0].onlyServices == nil)
    }

    /// `bluetooth.scan_watchdog`: on at 60 s unless configured; `off` or `0s` turn it off.
    @Test func scanWatchdog() throws {
        #expect(try parse("").bluetooth.scanWatchdog == .seconds(60))
        #expect(try parse("bluetooth: {}\n").bluetooth.scanWatchdog == .seconds(60))
        #expect(try parse("bluetooth: { scan_watchdog: ~ }\n").bluetooth.scanWatchdog == .seconds(60))
        #expect(try parse("bluetooth: { scan_watchdog: 2m }\n").bluetooth.scanWatchdog == .seconds(120))
        #expect(try parse("bluetooth: { scan_watchdog: 1s }\n").bluetooth.scanWatchdog == .seconds(1))
        #expect(try parse("bluetooth: { scan_watchdog: off }\n").bluetooth.scanWatchdog == nil)
        #expect(try parse("bluetooth: { scan_watchdog: \"Off\" }\n").bluetooth.scanWatchdog == nil)
        #expect(try parse("bluetooth: { scan_watchdog: 0s }\n").bluetooth.scanWatchdog == nil)
        #expect(try parse("bluetooth: { scan_watchdog: 0ms }\n").bluetooth.scanWatchdog == nil)
        #expect(BridgeConfig.Bluetooth().scanWatchdog == .seconds(60))
        #expect(
            failure("bluetooth: { scan_watchdog: 60 }\n")
                == "b.yaml:2:29: a duration needs a unit: write 60s (or 60ms, 60m, 60h) for 'bluetooth.scan_watchdog' (or off: no watchdog)")
        #expect(
            failure("bluetooth: { scan_watchdog: never }\n").hasSuffix(
                "for 'bluetooth.scan_watchdog' (or off: no watchdog)"))
        #expect(
            failure("bluetooth: { scan_watchdog: 500ms }\n")
                == "b.yaml:2:29: 'bluetooth.scan_watchdog' must be at least 1s (or off: no watchdog), not 500ms")
        #expect(
            failure("bluetooth: { scan_watchdog: [1s] }\n")
                == "b.yaml:2:29: expected a string for 'bluetooth.scan_watchdog', found a list")
    }

    /// `homeassistant.support_url`: optional, an http(s) URL.
    @Test func homeAssistantSupportURL() throws {
        #expect(try parse("").homeAssistant.supportURL == nil)
        #expect(
            try parse("homeassistant: { support_url: \"https://example.org/help\" }\n").homeAssistant.supportURL
                == "https://example.org/help")
        #expect(
            failure("homeassistant: { support_url: example.org }\n")
                == "b.yaml:2:31: 'homeassistant.support_url' must be an http:// or https:// URL, not 'example.org'")
        #expect(failure("homeassistant: { support_url: \"https://\" }\n").contains("must be an http:// or https:// URL"))
    }

    @Test func pollWithListen() throws {
        let c = try parse("""
            bluetooth: { max_connections: 2, advertisements: decodable }
            devices:
              - match: { address: "E4:5F:01:AB:CD:EF" }
                connection: poll
                poll_interval: 10m
                listen: 5s
                only_services: ["181a", "180F", "181a"]
            """)
        #expect(c.bluetooth.maxConnections == 2)
        #expect(c.bluetooth.advertisements == .decodable)
        #expect(c.devices[0].connection == .poll(interval: .seconds(600), listen: .seconds(5)))
        #expect(c.devices[0].connection.name == "poll")
        #expect(c.devices[0].onlyServices == [BluetoothUUID("181a")!, BluetoothUUID("180f")!])
    }

    @Test func advertisementDevice() throws {
        let c = try parse("""
            devices:
              - match: { address: "A4:C1:38:00:00:05" }
                connection: advertisement
                advertisement: { bindkey: "231d39c1d7cc1ab1aee224cd096db932", timeout: 2m }
            """)
        guard case .advertisement(let key, let timeout) = c.devices[0].connection else {
            Issue.record("not an advertisement device")
            return
        }
        #expect(key?.count == 16 && key?.first == 0x23)
        #expect(timeout == .seconds(120))
    }

    @Test func errors() {
        let device = "devices:\n  - match: { address: \"E4:5F:01:AB:CD:EF\" }\n"
        #expect(failure(device + "    connection: poll\n") == "b.yaml:3:5: 'connection: poll' needs 'poll_interval' in 'devices[0]' (e.g. poll_interval: 10m)")
        #expect(failure(device + "    connection: sometimes\n") == "b.yaml:4:17: 'devices[0].connection' must be always, poll or advertisement, not 'sometimes'")
        #expect(failure(device + "    poll_interval: 10m\n") == "b.yaml:4:5: 'devices[0].poll_interval' needs 'connection: poll' (this device is 'always')")
        #expect(failure(device + "    connection: poll\n    poll_interval: 500ms\n").hasPrefix("b.yaml:5:20:"))
        #expect(failure(device + "    connection: poll\n    poll_interval: 10s\n    listen: 10s\n") == "b.yaml:6:13: 'devices[0].listen' (10s) must be shorter than 'poll_interval' (10s)")
        #expect(failure(device + "    connection: advertisement\n    advertisement: { bindkey: \"12ab\" }\n") == "b.yaml:5:31: 'devices[0].advertisement.bindkey' must be 32 hex digits (a 16-byte AES key; 24 for a MiBeacon v2/v3 key), found 4 characters")
        #expect(failure(device + "    only_services: [\"zz\"]\n").hasPrefix("b.yaml:4:21:"))
        #expect(failure("bluetooth: { max_connections: 0 }\n").hasPrefix("b.yaml:2:31:"))
        #expect(failure("bluetooth: { advertisements: all }\n") == "b.yaml:2:30: 'bluetooth.advertisements' must be off or decodable, not 'all'")
    }

    @Test func gapAndGattAreNotMappedUnlessNamed() throws {
        let gatt = BluetoothUUID("1801")!, gap = BluetoothUUID("1800")!, hr = BluetoothUUID("180d")!
        #expect(!GattMapping.shouldMap(service: gatt, characteristic: BluetoothUUID("2a05")!, device: nil))
        #expect(!GattMapping.shouldMap(service: gatt, characteristic: BluetoothUUID("2b2a")!, device: nil))
        #expect(!GattMapping.shouldMap(service: gap, characteristic: BluetoothUUID("2a00")!, device: nil))
        #expect(GattMapping.shouldMap(service: hr, characteristic: BluetoothUUID("2a37")!, device: nil))
        let c = try parse("""
            devices:
              - match: { address: "E4:5F:01:AB:CD:EF" }
                characteristics: [{ uuid: "2a00", name: device_name }]
            """)
        #expect(GattMapping.shouldMap(service: gap, characteristic: BluetoothUUID("2a00")!, device: c.devices[0]))
        #expect(!GattMapping.shouldMap(service: gap, characteristic: BluetoothUUID("2a01")!, device: c.devices[0]))
    }

    @Test func onlyServicesRestrictsTheMapping() throws {
        let c = try parse("""
            devices:
              - match: { address: "E4:5F:01:AB:CD:EF" }
                only_services: ["181a"]
                characteristics: [{ uuid: "2a19" }]
            """)
        let d = c.devices[0]
        #expect(GattMapping.shouldMap(service: BluetoothUUID("181a")!, characteristic: BluetoothUUID("2a6e")!, device: d))
        #expect(!GattMapping.shouldMap(service: BluetoothUUID("180d")!, characteristic: BluetoothUUID("2a37")!, device: d))
        // Named characteristics are mapped wherever they are.
        #expect(GattMapping.shouldMap(service: BluetoothUUID("180f")!, characteristic: BluetoothUUID("2a19")!, device: d))
    }

    @Test func deviceInformationStringsAreUTF8() {
        for short in 0x2A24...0x2A29 {
            #expect(ValueFormat.default(for: BluetoothUUID(uuid16: UInt16(short))) == .utf8)
        }
        #expect(ValueFormat.default(for: BluetoothUUID(uuid16: 0x2A23)) == .hex)  // system id: bytes
        let payload = String(decoding: ValuePayload.make(raw: Array("Polar\0".utf8), format: .utf8), as: UTF8.self)
        #expect(payload == #"{"raw":"506f6c617200","value":"Polar"}"#)
        // Bytes that are not UTF-8 come out as hex, never a crash.
        let bad = String(decoding: ValuePayload.make(raw: [0xff, 0xfe], format: .utf8), as: UTF8.self)
        #expect(bad == #"{"raw":"fffe","value":"fffe"}"#)
    }

    @Test func slotsAreGrantedInArrivalOrder() {
        var slots = ConnectionSlots<String>(capacity: 2)
        let granted = [slots.request("a"), slots.request("b"), slots.request("c"), slots.request("d"), slots.request("c")]
        #expect(granted == [true, true, false, false, false])  // "c" asking again keeps its place
        #expect(slots.waiting == ["c", "d"])
        let held = slots.request("a")
        #expect(held)  // already held
        #expect(slots.release("x") == [])
        #expect(slots.release("d") == [])  // leaves the queue
        #expect(slots.release("a") == ["c"])
        #expect(slots.holders == ["b", "c"])
        let again = slots.request("a")
        #expect(!again)
        #expect(slots.release("b") == ["a"])
        #expect(slots.holds("a") && slots.holds("c") && !slots.holds("b"))
    }
}

/// SPEC §8 and §9 keys.
@Suite struct CommandPolicyConfigTests {
    func parse(_ yaml: String) throws -> BridgeConfig {
        try BridgeConfig.parse(yaml: "mqtt: { url: mqtt://h }\n" + yaml, fileName: "b.yaml", environment: [:], hostName: "h")
    }

    @Test func allowPatterns() throws {
        #expect(try parse("").commands.allow == [.everything])
        let c = try parse(#"commands: { allow: ["thermostat/*/*", "echo/custom/write"] }"#)
        #expect(c.commands.allows(device: "thermostat", service: "ffe0", characteristic: "setpoint"))
        #expect(c.commands.allows(device: "echo", service: "custom", characteristic: "write"))
        #expect(!c.commands.allows(device: "echo", service: "custom", characteristic: "write_command"))
        #expect(!c.commands.allows(device: "lock", service: "ffe0", characteristic: "ffe1"))
        #expect(try parse("commands: { allow: [] }").commands.allow.isEmpty)
        do {
            _ = try parse(#"commands: { allow: ["a/b"] }"#)
            Issue.record("a two-segment pattern was accepted")
        } catch {
            #expect("\(error)" == "b.yaml:2:21: invalid pattern 'a/b' in 'commands.allow' (expected device/service/characteristic, each a glob with * and ?)")
        }
    }

    @Test func healthInterval() throws {
        #expect(try parse("").health.interval == .seconds(60))
        #expect(try parse("health: { interval: 15s }").health.interval == .seconds(15))
        #expect(try parse("health: { interval: 0s }").health.interval == nil)
    }
}

/// check-config reports every error it can find.
@Suite struct ConfigAllErrorsTests {
    @Test func everySectionAndEveryDeviceIsChecked() {
        let yaml = """
            mqtt: { url: "ftp://x" }
            bluetooth: { max_connections: 0 }
            commands: { timeout: soon }
            devices:
              - match: { address: "zz" }
              - match: { address: "C8:12:34:56:78:9A" }
                connection: poll
              - match: { name: ok }
            """
        do {
            _ = try BridgeConfig.parse(yaml: yaml, fileName: "b.yaml", environment: [:], hostName: "h")
            Issue.record("no error")
        } catch {
            #expect(error.all.map { "\($0.line):\($0.column)" } == ["1:14", "2:31", "3:22", "5:23", "6:5"], "\(error.all)")
            #expect("\(error)".hasPrefix("b.yaml:1:14: unsupported URL scheme 'ftp'"))
        }
    }
}
