import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// A family of the tests' own (SPEC §13's rules without a real maker's format): manufacturer
/// data of company `0xACE0`, type byte first.
/// - `01 tt tt`: temperature (centi-°C, little endian), model `T1`, no packet counter.
/// - `02 cc tt`: encrypted with the key `aa…aa` (16 bytes): counter `cc`, temperature `tt` °C;
///   any other key is a bad MIC.
/// - `03 bb`: battery `bb` %, only from a device named `ACME-N` that advertises `fee5` (the
///   families told by the name and UUIDs).
enum AcmeFamily: AdvertisementFamily {
    static let name = "acme"
    static let company: UInt16 = 0xACE0
    static let key = [UInt8](repeating: 0xAA, count: 16)

    static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard let data = frame.manufacturerData[company], let type = data.first else { return nil }
        switch (type, data.count) {
        case (0x01, 3):
            let centi = Int16(bitPattern: UInt16(data[1]) | UInt16(data[2]) << 8)
            return .success(DecodedAdvertisement(
                decoder: name, values: ["temperature": .number(Double(centi) / 100)], manufacturer: "Acme", model: "T1"))
        case (0x02, 3):
            guard let key else { return .failure(.encryptedWithoutKey) }
            guard key == Self.key else { return .failure(.badMIC) }
            return .success(DecodedAdvertisement(
                decoder: name, values: ["temperature": .integer(Int64(data[2]))], encrypted: true, counter: UInt32(data[1]),
                manufacturer: "Acme", model: "T2"))
        case (0x03, 2):
            guard frame.name == "ACME-N", frame.serviceUUIDs.contains(BluetoothUUID(uuid16: 0xFEE5)) else { return nil }
            return .success(DecodedAdvertisement(
                decoder: name, values: ["battery": .integer(Int64(data[1]))], manufacturer: "Acme", model: "N"))
        default:
            return .failure(.malformed(family: name, reason: "type \(type) of \(data.count) bytes"))
        }
    }
}

/// SPEC §13 in the runtime over the fakes, with ``AcmeFamily``: frames without a counter,
/// encrypted frames without a key, wrong keys and replays, `decodable` advertisers, the name and
/// UUIDs of the device, maker and model in the payload and in Home Assistant.
@Suite struct AdvertisementFamiliesRuntimeTests {
    static let address = "A4:C1:38:00:00:07"
    static let topic = "ble/acme/advertisement"

    static func harness(bindkey: String? = nil, extra: String = "") throws -> RuntimeHarness {
        let key = bindkey.map { "\n    advertisement: { bindkey: \"\($0)\" }" } ?? ""
        return try RuntimeHarness(
            RuntimeHarness.base + """

                \(extra)
                devices:
                  - match: { address: "\(address)" }
                    name: acme
                    connection: advertisement\(key)
                """, families: [AcmeFamily.self])
    }

    static func payloads(_ h: RuntimeHarness) throws -> [JSONValue] {
        try h.broker.texts(topic).map { try JSONParser.parse(Array($0.utf8)) }
    }

    @Test("frames without a counter: A, B, A publishes all three; the same frame reported again does not publish")
    func framesWithoutCounter() async throws {
        let h = try Self.harness()
        let dev = h.central.addDevice(Self.address, name: "Acme T1", services: [:])
        let a: [UInt8] = [0x01, 0x66, 0x08], b: [UInt8] = [0x01, 0x67, 0x08]
        try await h.run {
            try await h.eventually("the session") { h.runtime.context.registry.entry(segment: "acme") != nil }
            h.central.advertise(dev, manufacturerData: [AcmeFamily.company: a])
            h.central.advertise(dev, manufacturerData: [AcmeFamily.company: a])  // BlueZ's repeated report
            h.central.advertise(dev, rssi: -70)  // RSSI only
            h.central.advertise(dev, manufacturerData: [AcmeFamily.company: b])
            h.central.advertise(dev, manufacturerData: [AcmeFamily.company: a])
            h.central.advertise(dev, manufacturerData: [AcmeFamily.company: a])
            try await h.advance(.seconds(1))
        }
        let published = try Self.payloads(h)
        #expect(published.map { $0["values"]?["temperature"]?.doubleValue } == [21.5, 21.51, 21.5])
        let first = try #require(published.first)
        #expect(first["manufacturer"]?.stringValue == "Acme")
        #expect(first["model"]?.stringValue == "T1")
        #expect(first["packet_id"]?.isNull == true)
        #expect(first["encrypted"] == nil)
    }

    @Test("a configured device without the key its frames need: published encrypted without values, the log says so once")
    func needsKey() async throws {
        let h = try Self.harness()
        let dev = h.central.addDevice(Self.address, name: "Acme T2", services: [:])
        try await h.run {
            try await h.eventually("the session") { h.runtime.context.registry.entry(segment: "acme") != nil }
            for counter: UInt8 in 1...3 {
                h.central.advertise(dev, manufacturerData: [AcmeFamily.company: [0x02, counter, 20]])
                h.central.advertise(dev, manufacturerData: [AcmeFamily.company: [0x02, counter, 20]])
            }
            try await h.eventually("three frames") { h.broker.texts(Self.topic).count == 3 }
            try await h.advance(.seconds(1))
            #expect(h.broker.last("ble/acme/availability") == "online")
        }
        let published = try Self.payloads(h)
        #expect(published.count == 3)
        for payload in published {
            #expect(payload["decoder"]?.stringValue == "acme")
            #expect(payload["encrypted"]?.boolValue == true)
            #expect(payload["values"] == nil)
            #expect(payload["manufacturer_data"]?["0xace0"] != nil)
        }
        let told = h.logLines.filter { $0.contains("bindkey") }
        #expect(told.count == 1, "\(h.logLines)")
        #expect(told.first?.contains("acme (\(Self.address))") == true, "names the device: \(told)")
    }

    @Test("with the key: decrypted values; a wrong key drops every frame; a counter that does not increase is a replay")
    func keysAndReplays() async throws {
        let good = try Self.harness(bindkey: String(repeating: "aa", count: 16))
        let dev = good.central.addDevice(Self.address, name: "Acme T2", services: [:])
        try await good.run {
            try await good.eventually("the session") { good.runtime.context.registry.entry(segment: "acme") != nil }
            good.central.advertise(dev, manufacturerData: [AcmeFamily.company: [0x02, 5, 20]])
            good.central.advertise(dev, manufacturerData: [AcmeFamily.company: [0x02, 5, 20]])  // a repeat, not a replay
            good.central.advertise(dev, manufacturerData: [AcmeFamily.company: [0x02, 6, 21]])
            good.central.advertise(dev, manufacturerData: [AcmeFamily.company: [0x02, 4, 22]])  // replayed
            good.central.advertise(dev, manufacturerData: [AcmeFamily.company: [0x02, 7, 23]])
            try await good.eventually("the replay counted") { good.runtime.context.advertisements.rejected(path: dev) == 1 }
            try await good.advance(.seconds(1))
        }
        let published = try good.broker.texts(Self.topic).map { try JSONParser.parse(Array($0.utf8)) }
        #expect(published.map { $0["values"]?["temperature"]?.int64Value } == [20, 21, 23])
        #expect(published.allSatisfy { $0["encrypted"]?.boolValue == true && $0["model"]?.stringValue == "T2" })

        let wrong = try Self.harness(bindkey: String(repeating: "bb", count: 16))
        let other = wrong.central.addDevice(Self.address, name: "Acme T2", services: [:])
        try await wrong.run {
            try await wrong.eventually("the session") { wrong.runtime.context.registry.entry(segment: "acme") != nil }
            wrong.central.advertise(other, manufacturerData: [AcmeFamily.company: [0x02, 1, 20]])
            wrong.central.advertise(other, manufacturerData: [AcmeFamily.company: [0x02, 2, 20]])
            try await wrong.eventually("both dropped") { wrong.runtime.context.advertisements.rejected(path: other) == 2 }
            #expect(wrong.broker.last("ble/acme/availability") == "online", "the device is there, its frames are not ours to read")
        }
        #expect(wrong.broker.texts(Self.topic).isEmpty)
    }

    @Test("advertisements: decodable: a family's advertiser is published with its model (also in Home Assistant); one that needs a key is not")
    func decodable() async throws {
        let h = try RuntimeHarness(
            RuntimeHarness.base + """

                bluetooth: { advertisements: decodable }
                homeassistant: { discovery: true }
                """, families: [AcmeFamily.self])
        let plain = h.central.addDevice("C0:FF:EE:00:00:11", name: "Acme T1", services: [:])
        let locked = h.central.addDevice("C0:FF:EE:00:00:12", name: "Acme T2", services: [:])
        try await h.run {
            try await h.eventually("discovery") { !h.central.calls("StartDiscovery").isEmpty }
            h.central.advertise(locked, manufacturerData: [AcmeFamily.company: [0x02, 1, 20]])
            h.central.advertise(plain, manufacturerData: [AcmeFamily.company: [0x01, 0x66, 0x08]])
            try await h.eventually("the plain sensor's packet") { !h.broker.texts("ble/c0ffee000011/advertisement").isEmpty }
            try await h.eventually("its Home Assistant device") {
                h.broker.last("homeassistant/device/ble_c0ffee000011/config")?.contains("adv_temperature") == true
            }
            h.central.advertise(locked, manufacturerData: [AcmeFamily.company: [0x02, 2, 21]])
            try await h.advance(.seconds(2))
        }
        let payload = try JSONParser.parse(Array(h.broker.texts("ble/c0ffee000011/advertisement")[0].utf8))
        #expect(payload["decoder"]?.stringValue == "acme")
        #expect(payload["model"]?.stringValue == "T1")
        let config = try JSONParser.parse(Array(try #require(h.broker.last("homeassistant/device/ble_c0ffee000011/config")).utf8))
        #expect(config["device"]?["manufacturer"]?.stringValue == "Acme")
        #expect(config["device"]?["model"]?.stringValue == "T1")
        #expect(config["device"]?["name"]?.stringValue == "Acme T1")
        #expect(config["components"]?["adv_temperature"]?["device_class"]?.stringValue == "temperature")
        #expect(!h.broker.all.contains { $0.message.topic.contains("c0ffee000012") }, "needs a key: not published")
        #expect(h.runtime.context.registry.entry(segment: "c0ffee000012") == nil)
    }

    @Test("the device's name and advertised UUIDs reach the families, for the frame and for decodable")
    func nameAndUUIDs() async throws {
        let h = try RuntimeHarness(
            RuntimeHarness.base + """

                bluetooth: { advertisements: decodable }
                """, families: [AcmeFamily.self])
        let named = h.central.addDevice("C0:FF:EE:00:00:21", name: "ACME-N", services: ["fee5": []])
        let unnamed = h.central.addDevice("C0:FF:EE:00:00:22", name: "Other", services: ["fee5": []])
        try await h.run {
            try await h.eventually("discovery") { !h.central.calls("StartDiscovery").isEmpty }
            h.central.advertise(unnamed, manufacturerData: [AcmeFamily.company: [0x03, 50]])
            h.central.advertise(named, manufacturerData: [AcmeFamily.company: [0x03, 80]])
            try await h.eventually("the named sensor") { !h.broker.texts("ble/c0ffee000021/advertisement").isEmpty }
            try await h.advance(.seconds(1))
        }
        let payload = try JSONParser.parse(Array(h.broker.texts("ble/c0ffee000021/advertisement")[0].utf8))
        #expect(payload["values"]?["battery"]?.int64Value == 80)
        #expect(payload["model"]?.stringValue == "N")
        #expect(!h.broker.all.contains { $0.message.topic.contains("c0ffee000022") }, "not its name: not the family's frame")
    }
}
