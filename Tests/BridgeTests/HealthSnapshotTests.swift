import Testing

@testable import Bridge

@Suite struct HealthSnapshotTests {
    static let snapshot = HealthSnapshot(
        uptime: 61.4, rssBytes: 12_345_678, published: 10, dropped: 2, mqttReconnects: 1, bluezAvailable: true,
        adapter: "hci0", adapterPresent: true, powered: true, discovering: false,
        devices: [
            .init(segment: "kitchen\"1", connected: true, available: true, rssi: -61, values: 7, reconnects: 3,
                  lastValueAge: 0.25, connection: "always"),
            .init(segment: "t2", connected: false, available: true, rssi: nil, values: 0, reconnects: 0,
                  lastValueAge: nil, connection: "poll"),
        ],
        slotsMax: 7, slotsInUse: 1, slotsWaiting: 0)

    @Test func prometheusText() {
        let text = Self.snapshot.prometheus(version: "1.2.3")
        #expect(text.contains("# TYPE ble_mqtt_bridge_build_info gauge\nble_mqtt_bridge_build_info{version=\"1.2.3\"} 1\n"))
        #expect(text.contains("ble_mqtt_bridge_uptime_seconds 61\n"))
        #expect(text.contains("ble_mqtt_bridge_mqtt_dropped_total 2\n"))
        #expect(text.contains("ble_mqtt_bridge_device_values_total{device=\"kitchen\\\"1\"} 7\n"))
        #expect(text.contains("ble_mqtt_bridge_device_last_value_age_seconds{device=\"kitchen\\\"1\"} 0.250\n"))
        #expect(!text.contains("device_rssi_dbm{device=\"t2\"}"), "no sample without an RSSI")
        // Every sample line belongs to a family declared just before it.
        var declared = Set<String>()
        for line in text.split(separator: "\n") {
            if line.hasPrefix("# TYPE ") { declared.insert(String(line.split(separator: " ")[2])) }
            else if !line.hasPrefix("#") {
                let name = String(line.prefix { $0 != "{" && $0 != " " })
                #expect(declared.contains(name), "\(line)")
            }
        }
    }

    @Test func jsonObject() {
        let json = String(decoding: JSONValueBytes.of(Self.snapshot), as: UTF8.self)
        #expect(json.contains(#""uptime_s":61"#))
        #expect(json.contains(#""mqtt":{"published":10,"dropped":2,"reconnects":1}"#))
        #expect(json.contains(#""t2":{"connected":false,"available":true,"rssi":null,"values":0,"reconnects":0,"last_value_age_s":null,"connection":"poll"}"#))
    }
}

import BridgeCore

enum JSONValueBytes {
    static func of(_ s: HealthSnapshot) -> [UInt8] { JSONValue.object(s.json).jsonBytes }
}
