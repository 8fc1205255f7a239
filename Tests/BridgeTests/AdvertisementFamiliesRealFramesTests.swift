import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// SPEC §13 in the runtime with the real families and frames captured from real devices
/// (xiaomi-ble's test suite, as data): an encrypted LYWSD03MMC with and without its bindkey, a
/// MiFlora picked up by `advertisements: decodable` with its model and plant values in Home
/// Assistant.
@Suite struct AdvertisementFamiliesRealFramesTests {
    /// xiaomi-ble tests/test_parser.py::test_Xiaomi_LYWSD03MMC_encrypted.
    static let lywsd03mmc = (address: "A4:C1:38:02:83:F4", frame: "58585b0550f4830238c1a495ef58763c26000097e2abb5",
                             key: "e9ea895fac7cca6d30532432a516f3a8")
    /// xiaomi-ble tests/test_parser.py::test_Xiaomi_HHCCJCY01_all_values (moisture, conductivity).
    static let miflora = (address: "C4:7C:8D:6A:3E:7A", frames: ["71209800477a3e6a8d7cc40d08100140", "71209800687a3e6a8d7cc40d0910025702"])

    static func config(bindkey: String?) -> String {
        RuntimeHarness.base + """

            devices:
              - match: { address: "\(lywsd03mmc.address)" }
                name: bedroom
                connection: advertisement\(bindkey.map { "\n    advertisement: { bindkey: \"\($0)\" }" } ?? "")
            """
    }

    @Test("an encrypted LYWSD03MMC: with its bindkey its values with maker and model; without, encrypted and no values, logged once")
    func encryptedXiaomi() async throws {
        let frame = try Hex.decode(Self.lywsd03mmc.frame)
        for bindkey in [Self.lywsd03mmc.key, nil] {
            let h = try RuntimeHarness(Self.config(bindkey: bindkey))
            let dev = h.central.addDevice(Self.lywsd03mmc.address, name: "LYWSD03MMC", services: [:])
            try await h.run {
                try await h.eventually("the session") { h.runtime.context.registry.entry(segment: "bedroom") != nil }
                h.central.advertise(dev, serviceData: ["fe95": frame])
                h.central.advertise(dev, serviceData: ["fe95": frame])  // the same frame again: a repeat
                try await h.eventually("a publication") { !h.broker.texts("ble/bedroom/advertisement").isEmpty }
                try await h.advance(.seconds(1))
            }
            let texts = h.broker.texts("ble/bedroom/advertisement")
            #expect(texts.count == 1, "\(texts)")
            let payload = try JSONParser.parse(Array(try #require(texts.first).utf8))
            #expect(payload["decoder"]?.stringValue == "xiaomi")
            #expect(payload["encrypted"]?.boolValue == true)
            #expect(h.runtime.context.advertisements.rejected(path: dev) == 0)
            if bindkey != nil {
                #expect(payload["model"]?.stringValue == "LYWSD03MMC", "\(payload)")
                #expect(payload["manufacturer"]?.stringValue != nil, "\(payload)")
                #expect(payload["values"]?.objectValue?.isEmpty == false, "\(payload)")
                #expect(!h.logLines.contains { $0.contains("bindkey") })
            } else {
                #expect(payload["values"] == nil)
                #expect(h.logLines.filter { $0.contains("bindkey") && $0.contains("bedroom") }.count == 1, "\(h.logLines)")
            }
        }
    }

    @Test("advertisements: decodable: a MiFlora appears with its model and its plant values in Home Assistant")
    func decodableMiFlora() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { advertisements: decodable }
            homeassistant: { discovery: true }
            """)
        let dev = h.central.addDevice(Self.miflora.address, name: "Flower care", services: [:])
        let segment = "c47c8d6a3e7a"
        try await h.run {
            try await h.eventually("discovery") { !h.central.calls("StartDiscovery").isEmpty }
            // The first frame makes the supervisor start a session (which publishes what the tree
            // holds); the next one goes straight to the router.
            h.central.advertise(dev, serviceData: ["fe95": try Hex.decode(Self.miflora.frames[0])])
            try await h.eventually("the first frame") { !h.broker.texts("ble/\(segment)/advertisement").isEmpty }
            h.central.advertise(dev, serviceData: ["fe95": try Hex.decode(Self.miflora.frames[1])])
            try await h.eventually("both values in Home Assistant") {
                let config = h.broker.last("homeassistant/device/ble_\(segment)/config") ?? ""
                return config.contains("adv_moisture") && config.contains("adv_conductivity")
            }
        }
        let config = try JSONParser.parse(Array(try #require(h.broker.last("homeassistant/device/ble_\(segment)/config")).utf8))
        #expect(config["device"]?["model"]?.stringValue == "HHCCJCY01", "\(String(describing: config["device"]))")
        #expect(config["device"]?["manufacturer"]?.stringValue != nil)
        #expect(config["components"]?["adv_moisture"]?["device_class"]?.stringValue == "moisture")
        #expect(config["components"]?["adv_conductivity"]?["unit_of_measurement"]?.stringValue == "µS/cm")
        #expect(h.broker.texts("ble/\(segment)/advertisement").count == 2)
    }

    @Test("a ThermoPro whose frames BlueZ keeps under every 'company id' they began with: each report read from the entry it changed")
    func accumulatedManufacturerData() async throws {
        // thermopro-ble tests/test_parser.py: the first two bytes of the frame are data (type, temperature).
        let first: (UInt16, [UInt8]) = (0xF1C2, [0x00, 0x1D, 0x02, 0x2C])  // 24.1 °C, 29 %
        let second: (UInt16, [UInt8]) = (0xF9C2, [0x00, 0x10, 0x02, 0x2C])  // 24.9 °C, 16 %
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { advertisements: decodable }
            homeassistant: { discovery: true }
            """)
        let dev = h.central.addDevice("49:22:11:00:21:42", name: "TP357 (2142)", services: [:])
        let topic = "ble/492211002142/advertisement"
        try await h.run {
            try await h.eventually("discovery") { !h.central.calls("StartDiscovery").isEmpty }
            h.central.advertise(dev, manufacturerData: [first.0: first.1])
            try await h.eventually("the first frame") { h.broker.texts(topic).count == 1 }
            // BlueZ's ManufacturerData now holds both entries.
            h.central.advertise(dev, manufacturerData: [first.0: first.1, second.0: second.1])
            h.central.advertise(dev, manufacturerData: [first.0: first.1, second.0: second.1])
            try await h.eventually("the second frame") { h.broker.texts(topic).count == 2 }
            try await h.advance(.seconds(1))
        }
        let published = try h.broker.texts(topic).map { try JSONParser.parse(Array($0.utf8)) }
        #expect(published.count == 2)
        #expect(published.map { $0["decoder"]?.stringValue } == ["thermopro", "thermopro"])
        #expect(published.map { $0["values"]?["temperature"]?.doubleValue } == [24.1, 24.9])
        #expect(published.map { $0["values"]?["humidity"]?.int64Value } == [29, 16])
        #expect(published.first?["model"]?.stringValue == "TP357")
        let config = try JSONParser.parse(Array(try #require(h.broker.last("homeassistant/device/ble_492211002142/config")).utf8))
        #expect(config["device"]?["manufacturer"]?.stringValue == "ThermoPro")
        #expect(config["device"]?["model"]?.stringValue == "TP357")
    }

    @Test("decodable and scan tell a family's device by any one of BlueZ's manufacturer-data entries")
    func anyEntry() throws {
        let address = try #require(BluetoothAddress("49:22:11:00:21:42"))
        let frame = AdvertisementFrame(
            address: address, manufacturerData: [0xF1C2: [0x00, 0x1D, 0x02, 0x2C], 0xF9C2: [0x00, 0x10, 0x02, 0x2C]],
            name: "TP357 (2142)")
        #expect(AdvertisementDecoder.claim(frame, bindkey: nil)?.decoded == nil, "which entry is the newest is unknown")
        let any = AdvertisementDecoder.claimAnyEntry(frame, bindkey: nil)
        #expect(any?.decoder == "thermopro")
        #expect(any?.summary?.hasPrefix("thermopro TP357 temperature=") == true, "\(String(describing: any?.summary))")
        #expect(AdvertisementRouter.changedEntries([1: [1], 2: [2]], since: [1: [1]]) == [2: [2]])
        #expect(AdvertisementRouter.changedEntries([1: [1], 2: [3]], since: [1: [1], 2: [2]]) == [2: [3]])
        #expect(AdvertisementRouter.changedEntries([1: [1], 2: [2]], since: [:]) == nil, "all new: nothing to tell apart")
        #expect(AdvertisementRouter.changedEntries([1: [1], 2: [2]], since: [1: [1], 2: [2]]) == nil)
    }
}
