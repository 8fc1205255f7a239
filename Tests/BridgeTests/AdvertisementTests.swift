import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// SPEC §7 over the fakes: advertisement devices are never connected; each new packet is
/// published once on `{base}/{device}/advertisement`; availability follows the advertisements.
@Suite struct AdvertisementTests {
    static let address = "A4:C1:38:00:00:05"

    /// A pvvx custom-format frame (service data 181a, 15 bytes) with frame counter `counter`.
    static func pvvx(counter: UInt8, centi: Int16 = 2150) -> [UInt8] {
        let t = UInt16(bitPattern: centi)
        return [0x05, 0x00, 0x00, 0x38, 0xC1, 0xA4, UInt8(t & 0xFF), UInt8(t >> 8), 0xA0, 0x11, 0x86, 0x0B, 91, counter, 0x05]
    }

    /// An unencrypted BTHome v2 frame: packet id, battery 91 %, temperature 21.50 °C, humidity 45.12 %.
    static func bthome(packet: UInt8) -> [UInt8] {
        [0x40, 0x00, packet, 0x01, 0x5B, 0x02, 0x66, 0x08, 0x03, 0xA0, 0x11]
    }

    static func advertiser(_ h: RuntimeHarness, _ address: String = address, name: String = "ATC_000005") -> String {
        h.central.addDevice(address, name: name, services: [:])
    }

    @Test("a connection: advertisement device is published per new packet, never connected, and times out")
    func advertisementDevice() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            devices:
              - match: { address: "\(Self.address)" }
                name: living_room
                connection: advertisement
                advertisement: { timeout: 30s }
            """)
        let dev = Self.advertiser(h)
        try await h.run {
            try await h.eventually("the session") { h.runtime.context.registry.entry(segment: "living_room") != nil }
            h.central.advertise(dev, rssi: -61, serviceData: ["181a": Self.pvvx(counter: 1)])
            try await h.eventually("the first packet") { h.broker.texts("ble/living_room/advertisement").count == 1 }
            let payload = try JSONParser.parse(Array(h.broker.texts("ble/living_room/advertisement")[0].utf8))
            #expect(payload["decoder"]?.stringValue == "pvvx")
            #expect(payload["rssi"]?.int64Value == -61)
            #expect(payload["packet_id"]?.int64Value == 1)
            #expect(payload["values"]?["temperature"]?.doubleValue == 21.5)
            #expect(payload["values"]?["humidity"]?.doubleValue == 45.12)
            #expect(payload["values"]?["battery"]?.int64Value == 91)
            #expect(payload["service_data"]?["181a"]?.stringValue == Hex.encode(Self.pvvx(counter: 1)))
            try await h.eventually("online") { h.broker.last("ble/living_room/availability") == "online" }

            // The same packet again (BlueZ reports the RSSI of each advertisement): not published.
            h.central.advertise(dev, rssi: -65)
            h.central.advertise(dev, rssi: -62, serviceData: ["181a": Self.pvvx(counter: 1)])
            // A new packet: published once.
            h.central.advertise(dev, rssi: -60, serviceData: ["181a": Self.pvvx(counter: 2, centi: 2160)])
            try await h.eventually("the second packet") { h.broker.texts("ble/living_room/advertisement").count == 2 }
            try await h.advance(.seconds(2))
            #expect(h.broker.texts("ble/living_room/advertisement").count == 2)

            // Quiet for the timeout: offline; the next advertisement brings it back.
            try await h.advance(.seconds(25))
            #expect(h.broker.last("ble/living_room/availability") == "online", "not before the timeout")
            try await h.eventually("offline after 30 s") { h.broker.last("ble/living_room/availability") == "offline" }
            h.central.advertise(dev, rssi: -60, serviceData: ["181a": Self.pvvx(counter: 3)])
            try await h.eventually("online again") { h.broker.last("ble/living_room/availability") == "online" }

            // Commands have no link to run on.
            h.command("ble/living_room/181a/2a6e/get", "")
            try await h.eventually("a result") { !h.broker.texts("ble/living_room/181a/2a6e/result").isEmpty }
            #expect(h.broker.last("ble/living_room/181a/2a6e/result")?.contains("not_connected") == true)
        }
        #expect(h.central.calls("Connect").isEmpty, "never connected")
        #expect(h.central.calls("ConnectDevice").isEmpty)
    }

    @Test("scanning for advertisements: no UUID filter, duplicate data on")
    func discoveryFilter() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["180d"] }
            devices:
              - match: { address: "\(Self.address)" }
                connection: advertisement
            """)
        try await h.run {
            try await h.eventually("discovery") { !h.central.calls("StartDiscovery").isEmpty }
        }
        let filter = try #require(h.central.calls("SetDiscoveryFilter").last)
        #expect(filter.path.contains("duplicate=true"), "\(filter)")
        #expect(filter.path.contains("uuids=[]"), "\(filter)")
    }

    @Test("advertisements: decodable picks up what a decoder understands, and nothing else")
    func decodable() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { advertisements: decodable }
            """)
        let sensor = Self.advertiser(h, "C0:FF:EE:00:00:01", name: "SBHT-003C")
        let noise = Self.advertiser(h, "7A:11:22:33:44:55", name: "")
        try await h.run {
            try await h.eventually("discovery") { !h.central.calls("StartDiscovery").isEmpty }
            h.central.advertise(noise, serviceData: ["fe9f": [0x00, 0x01, 0x02]], manufacturerData: [0x004C: [0x10, 0x05, 0x01]])
            h.central.advertise(sensor, serviceData: ["fcd2": Self.bthome(packet: 7)])
            try await h.eventually("the BTHome sensor's packet") { !h.broker.texts("ble/c0ffee000001/advertisement").isEmpty }
            let payload = try JSONParser.parse(Array(h.broker.texts("ble/c0ffee000001/advertisement")[0].utf8))
            #expect(payload["decoder"]?.stringValue == "bthome_v2")
            #expect(payload["packet_id"]?.int64Value == 7)
            #expect(payload["values"]?["temperature"]?.doubleValue == 21.5)
            h.central.advertise(noise, serviceData: ["fe9f": [0x00, 0x01, 0x03]])
            try await h.advance(.seconds(2))
        }
        #expect(!h.broker.all.contains { $0.message.topic.hasPrefix("ble/7a1122334455") }, "no decoder understands it: not published")
        #expect(h.runtime.context.registry.entry(segment: "7a1122334455") == nil)
        #expect(h.central.calls("Connect").isEmpty)
    }

    @Test("Home Assistant: an advertisement device's decoded values become entities")
    func homeAssistant() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            homeassistant: { discovery: true }
            devices:
              - match: { address: "\(Self.address)" }
                name: living_room
                connection: advertisement
            """)
        let dev = Self.advertiser(h)
        try await h.run {
            try await h.eventually("the session") { h.runtime.context.registry.entry(segment: "living_room") != nil }
            h.central.advertise(dev, serviceData: ["181a": Self.pvvx(counter: 9)])
            try await h.eventually("a device config") {
                h.broker.last("homeassistant/device/ble_a4c138000005/config")?.contains("adv_temperature") == true
            }
        }
        let config = try JSONParser.parse(Array(try #require(h.broker.last("homeassistant/device/ble_a4c138000005/config")).utf8))
        let temperature = try #require(config["components"]?["adv_temperature"])
        #expect(temperature["device_class"]?.stringValue == "temperature")
        #expect(temperature["unit_of_measurement"]?.stringValue == "°C")
        #expect(temperature["state_topic"]?.stringValue == "ble/living_room/advertisement")
        #expect(config["components"]?["adv_battery"]?["device_class"]?.stringValue == "battery")
    }

    @Test("Home Assistant's resend after the configs sends each device's last packet once more (its new entities get a state); BlueZ's repeats are never published")
    func homeAssistantResendOnce() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { advertisements: decodable }
            homeassistant: { discovery: true }
            devices:
              - match: { address: "\(Self.address)" }
                name: living_room
                connection: advertisement
            """)
        let configured = Self.advertiser(h)
        // A family without a packet id (ThermoPro TP357, thermopro-ble's test frame), picked up by decodable.
        let thermo = h.central.addDevice("B8:59:CE:32:21:42", name: "TP357 (2142)", services: [:])
        let topics = ["ble/living_room/advertisement", "ble/b859ce322142/advertisement"]
        try await h.run {
            try await h.eventually("discovery") { !h.central.calls("StartDiscovery").isEmpty }
            h.central.advertise(configured, serviceData: ["181a": Self.pvvx(counter: 9)])
            h.central.advertise(thermo, manufacturerData: [0xF1C2: [0x00, 0x1D, 0x02, 0x2C]])
            try await h.eventually("both devices' configs") {
                h.broker.last("homeassistant/device/ble_a4c138000005/config")?.contains("adv_temperature") == true
                    && h.broker.last("homeassistant/device/ble_b859ce322142/config")?.contains("adv_temperature") == true
            }
            // BlueZ reports the same packets again (DuplicateData); the resend is due 2 s after the configs.
            h.central.advertise(configured, rssi: -60, serviceData: ["181a": Self.pvvx(counter: 9)])
            h.central.advertise(thermo, rssi: -60, manufacturerData: [0xF1C2: [0x00, 0x1D, 0x02, 0x2C]])
            try await h.advance(.seconds(5))
            for topic in topics {
                let texts = h.broker.texts(topic)
                #expect(texts.count == 2 && texts.first == texts.last, "the packet and its one resend: \(topic): \(texts)")
            }
            // Home Assistant comes online again: configs again, and the last packets once more.
            h.command("homeassistant/status", "online")
            try await h.advance(.seconds(5))
            for topic in topics { #expect(h.broker.texts(topic).count == 3, "\(topic): \(h.broker.texts(topic))") }
            // A new packet is published, once.
            h.central.advertise(configured, serviceData: ["181a": Self.pvvx(counter: 10)])
            try await h.eventually("the new packet") { h.broker.texts(topics[0]).count == 4 }
            h.central.advertise(configured, rssi: -61, serviceData: ["181a": Self.pvvx(counter: 10)])
            try await h.advance(.seconds(1))
            #expect(h.broker.texts(topics[0]).count == 4, "BlueZ's repeat of the new packet is not published")
        }
    }

    @Test("BlueZ dropping a quiet advertiser's object does not end it: its next advertisement is published, availability follows the timeout")
    func temporaryDeviceRemoved() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            devices:
              - match: { address: "\(Self.address)" }
                name: living_room
                connection: advertisement
                advertisement: { timeout: 60s }
            """)
        let dev = Self.advertiser(h)
        try await h.run {
            try await h.eventually("the session") { h.runtime.context.registry.entry(segment: "living_room") != nil }
            h.central.advertise(dev, serviceData: ["181a": Self.pvvx(counter: 1)])
            try await h.eventually("the first packet") { h.broker.texts("ble/living_room/advertisement").count == 1 }
            h.central.dropObject(dev)
            try await h.advance(.seconds(35))
            #expect(h.broker.last("ble/living_room/availability") == "online", "within the timeout")
            #expect(h.runtime.context.registry.entry(segment: "living_room") != nil, "the session goes on")
            // The device advertises again: BlueZ creates the object anew at the same path.
            _ = Self.advertiser(h)
            h.central.advertise(dev, serviceData: ["181a": Self.pvvx(counter: 2)])
            try await h.eventually("the next packet") { h.broker.texts("ble/living_room/advertisement").count == 2 }
        }
    }

    @Test("an adapter offering AdvertisementMonitorManager1: a monitor for every decoder's frames, and no scan for advertisement devices")
    func passiveMonitor() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            devices:
              - match: { address: "\(Self.address)" }
                name: living_room
                connection: advertisement
            """)
        h.central.add(path: FakeCentral.adapter, BlueZ.advertisementMonitorManager, ["SupportedMonitorTypes": .stringArray(["or_patterns"])])
        let dev = Self.advertiser(h)
        try await h.run {
            try await h.eventually("the monitor") { !h.central.calls("RegisterMonitor").isEmpty }
            try await h.advance(.seconds(2))
            h.central.advertise(dev, serviceData: ["181a": Self.pvvx(counter: 4)])
            try await h.eventually("the packet") { h.broker.texts("ble/living_room/advertisement").count == 1 }
        }
        let monitor = try #require(h.central.calls("RegisterMonitor").first)
        #expect(monitor.bytes.starts(with: [0x16, 0xD2, 0xFC, 0x16, 0x1A, 0x18, 0x16, 0x95, 0xFE]), "service data fcd2, 181a, fe95 …: \(monitor)")
        #expect(Supervisor.monitorPatterns.contains(AdvertisementMonitorPattern(adType: 0xFF, content: [0x69, 0x09])), "SwitchBot's company id")
        #expect(Supervisor.monitorPatterns.contains(AdvertisementMonitorPattern(adType: 0x09, content: Array("TP3".utf8))), "ThermoPro's name")
        // Discovery may have started before the monitor was active; then it stopped.
        #expect(h.central.calls("StartDiscovery").count <= h.central.calls("StopDiscovery").count)
    }

    @Test("BlueZ 5.66's reports: a repeated encrypted frame is a repeat, not a replay; rotating sets publish each packet once; RSSI 127 is null")
    func realStackReports() async throws {
        let key: [UInt8] = try Hex.decode("231d39c1d7cc1ab1aee224cd096db932")
        let h = try RuntimeHarness(RuntimeHarness.base + """

            devices:
              - match: { address: "\(Self.address)" }
                name: porch
                connection: advertisement
                advertisement: { bindkey: "231d39c1d7cc1ab1aee224cd096db932" }
            """)
        let dev = Self.advertiser(h)
        let address = try #require(BluetoothAddress(Self.address))
        func frame(_ counter: UInt32) throws -> [UInt8] {
            try #require(BTHomeEncoder.encryptedServiceData(
                [BTHomeEncoder.Object(id: 0x00, raw: Int64(counter)), BTHomeEncoder.Object(id: 0x01, raw: 90)],
                key: key, counter: counter, address: address))
        }
        try await h.run {
            try await h.eventually("the session") { h.runtime.context.registry.entry(segment: "porch") != nil }
            let first = try frame(1)
            for _ in 0..<3 { h.central.advertise(dev, rssi: 127, serviceData: ["fcd2": first]) }
            // Another advertisement set of the same device, then the first again, twice over.
            for _ in 0..<2 {
                h.central.advertise(dev, serviceData: ["9999": [0x01, 0x02]])
                h.central.advertise(dev, serviceData: ["fcd2": first])
            }
            h.central.advertise(dev, serviceData: ["fcd2": try frame(2)])
            try await h.eventually("three messages") { h.broker.texts("ble/porch/advertisement").count >= 3 }
            try await h.advance(.seconds(1))
            #expect(h.runtime.context.advertisements.rejected(path: dev) == 0, "repeats are not replays")
            // A frame from before (counter 1, with other bytes): a replay.
            h.central.advertise(dev, serviceData: ["9999": [0x03]])
            h.central.advertise(dev, serviceData: ["fcd2": first])
            try await h.eventually("the replay counted") { h.runtime.context.advertisements.rejected(path: dev) == 1 }
        }
        let published = h.broker.texts("ble/porch/advertisement").map { try? JSONParser.parse(Array($0.utf8)) }
        #expect(published.count == 4, "packet 1, the other set once, packet 2, the other set's new data: \(published)")
        #expect(published.first??["rssi"]?.isNull == true, "127 means not available")
        #expect(published.compactMap { $0?["packet_id"]?.int64Value } == [1, 2])
    }
}
