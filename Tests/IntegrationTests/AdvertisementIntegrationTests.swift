import Foundation
import Testing

/// SPEC §7 on bluez-sim (scripts/sim/advertisers.yaml): broadcast sensors are published from
/// their advertisements, decoded, once per packet, without a connection.
@Suite(.timeLimit(.minutes(2)))
struct AdvertisementIntegrationTests {
    static let pvvx = "A4:C1:38:00:00:05"
    static let atc = "A4:C1:38:00:00:06"
    static let bthome = "C0:FF:EE:00:00:01"
    static let encrypted = "C0:FF:EE:00:00:02"
    static let phone = "7A:11:22:33:44:55"
    static let bindkey = "231d39c1d7cc1ab1aee224cd096db932"

    static func options(bluetooth: String = "", devices: String) -> HarnessOptions {
        var options = HarnessOptions()
        options.scenario = "\(Paths.root)/scripts/sim/advertisers.yaml"
        options.config = { port in
            """
            mqtt: { url: "mqtt://127.0.0.1:\(port)", client_id: bridge-under-test }
            bluetooth:
              adapter: hci0
            \(bluetooth)
            devices:
            \(devices)
            """
        }
        return options
    }

    static func payloads(_ harness: Harness, _ device: String) -> [[String: Any]] {
        harness.observer.messages("ble/\(device)/advertisement").compactMap(\.object)
    }

    @Test("pvvx, ATC1441, BTHome v2 and encrypted BTHome v2: decoded values, packets once, online, never connected")
    func decoders() async throws {
        let options = Self.options(devices: """
              - { match: { address: "\(Self.pvvx)" }, name: pvvx, connection: advertisement }
              - { match: { address: "\(Self.atc)" }, name: atc, connection: advertisement }
              - { match: { address: "\(Self.bthome)" }, name: bthome, connection: advertisement }
              - match: { address: "\(Self.encrypted)" }
                name: secret
                connection: advertisement
                advertisement: { bindkey: "\(Self.bindkey)", timeout: 1m }
            """)
        try await Harness.with(options) { harness in
            for device in ["pvvx", "atc", "bthome", "secret"] {
                _ = try await harness.waitFor("ble/\(device)/advertisement", timeout: .seconds(15)) { _ in
                    Self.payloads(harness, device).count >= 4
                }
                try await harness.waitFor("ble/\(device)/availability", timeout: .seconds(5)) { $0.payload == "online" }
            }
            let expected: [(String, String, Double, Double)] = [
                ("pvvx", "pvvx", 21.5, 45), ("atc", "atc1441", 19.0, 52), ("bthome", "bthome_v2", 23.0, 40),
                ("secret", "bthome_v2", 20.0, 55),
            ]
            for (device, decoder, temperature, humidity) in expected {
                let all = Self.payloads(harness, device)
                for p in all {
                    #expect(p["decoder"] as? String == decoder, "\(device): \(p)")
                    let values = p["values"] as? [String: Any] ?? [:]
                    let t = try #require(values["temperature"] as? Double, "\(device): \(p)")
                    #expect(abs(t - temperature) <= 0.6, "\(device): temperature \(t)")
                    let h = try #require((values["humidity"] as? NSNumber)?.doubleValue, "\(device): \(p)")
                    #expect(abs(h - humidity) <= 2.1, "\(device): humidity \(h)")
                    #expect(values["battery"] != nil, "\(device): \(p)")
                    #expect(p["rssi"] is Int, "\(device): \(p)")
                    #expect(p["service_data"] is [String: Any], "\(device): \(p)")
                }
                // Each packet once: the packet ids never repeat in a row.
                let ids = all.compactMap { $0["packet_id"] as? Int }
                #expect(ids.count == all.count, "\(device): every payload has a packet id")
                #expect(zip(ids, ids.dropFirst()).allSatisfy { $0 != $1 }, "\(device): \(ids)")
            }
            // Button presses arrive as events (every 4th and every 3rd packet).
            #expect(Self.payloads(harness, "bthome").contains { ($0["values"] as? [String: Any])?["button"] as? String == "press" })
            #expect(Self.payloads(harness, "secret").contains { ($0["values"] as? [String: Any])?["button"] as? String == "press" })
            // Listed as advertisement devices, never connected.
            let devices = try await harness.retained("ble/bridge/devices")
            let entries = (JSON.array(devices.payload) ?? []).compactMap { $0 as? [String: Any] }
            #expect(entries.count == 4, "\(entries)")
            for e in entries {
                #expect(e["connection"] as? String == "advertisement" && JSON.bool(e["connected"]) == false, "\(e)")
            }
        }
    }

    @Test("a wrong bindkey: nothing published but the device's availability; advertisements: decodable ignores the phone")
    func wrongKeyAndDecodable() async throws {
        let options = Self.options(
            bluetooth: "  advertisements: decodable",
            devices: """
                  - match: { address: "\(Self.encrypted)" }
                    name: secret
                    connection: advertisement
                    advertisement: { bindkey: "00112233445566778899aabbccddeeff" }
                """)
        try await Harness.with(options) { harness in
            // decodable: the unencrypted advertisers appear under their address segments.
            for segment in ["a4c138000005", "a4c138000006", "c0ffee000001"] {
                _ = try await harness.waitFor("ble/\(segment)/advertisement", timeout: .seconds(15))
            }
            try await harness.waitFor("ble/secret/availability", timeout: .seconds(10)) { $0.payload == "online" }
            // The bridge logs each frame it drops: three frames of the device (one every 500 ms)
            // handled and not published; the first, which brought it online, a second before.
            try await harness.waitForBridgeLogLines(count: 3, "frames of \(Self.encrypted) dropped") {
                $0.contains("\(Self.encrypted): advertisement dropped (bthome_v2)")
            }
            #expect(Self.payloads(harness, "secret").isEmpty, "frames with a wrong MIC are never published")
            // The simulator has reported the phone; the bridge's device list, asked afterwards,
            // does not have it.
            try await harness.waitForLine(in: harness.simulatorLogPath, "the phone found") {
                $0.contains("address=\(Self.phone)") && $0.hasSuffix(" device found")
            }
            let listed = try await harness.bridgeRequest("devices")
            let addresses = ((listed["data"] as? [String: Any])?["devices"] as? [Any] ?? []).compactMap {
                ($0 as? [String: Any])?["address"] as? String
            }
            #expect(addresses.contains(Self.pvvx) && !addresses.contains(Self.phone), "devices: \(addresses)")
            #expect(harness.observer.messages("ble/7a1122334455/advertisement").isEmpty, "no decoder understands the phone")
            #expect(!harness.observer.all.contains { $0.topic.hasPrefix("ble/7a1122334455/") })
        }
    }

    @Test("passive scanning: with AdvertisementMonitorManager1 (bluetoothd -E) the scan stops and advertisements keep coming")
    func passiveMonitor() async throws {
        var options = Self.options(
            bluetooth: "  advertisements: off",
            devices: """
                  - { match: { address: "\(Self.pvvx)" }, name: pvvx, connection: advertisement }
                  - match: { address: "\(Self.encrypted)" }
                    name: secret
                    connection: advertisement
                    advertisement: { bindkey: "\(Self.bindkey)" }
                """)
        let base = options.config
        options.config = { port in base(port) + "\nhealth: { interval: 1s }\n" }
        options.simulatorArguments = ["--experimental"]
        try await Harness.with(options) { harness in
            _ = try await harness.waitForBridgeLog(timeout: .seconds(15), "the monitor") {
                $0.contains("advertisement monitor registered")
            }
            // The scan stops (nothing else is wanted); bridge/health says so.
            let quiet = try await harness.waitFor("ble/bridge/health", timeout: .seconds(15)) { Self.discovering($0) == false }
            let start = quiet.index
            // Advertisements keep coming without it.
            for device in ["pvvx", "secret"] {
                _ = try await harness.waitFor("ble/\(device)/advertisement", after: start, timeout: .seconds(10)) { _ in
                    Self.count(harness, "ble/\(device)/advertisement", after: start) >= 3
                }
            }
            let scanned = Self.scanned(harness, after: start)
            #expect(!scanned, "no scan while the monitor works")
        }
    }

    static func discovering(_ message: MQTTMessage) -> Bool? {
        (message.object?["bluez"] as? [String: Any]).flatMap { JSON.bool($0["discovering"]) }
    }

    static func scanned(_ harness: Harness, after index: Int) -> Bool {
        harness.observer.messages("ble/bridge/health").contains { $0.index > index && discovering($0) != false }
    }

    static func count(_ harness: Harness, _ topic: String, after index: Int) -> Int {
        harness.observer.messages(topic).filter { $0.index > index }.count
    }
}
