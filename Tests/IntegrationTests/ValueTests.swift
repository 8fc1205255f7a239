import Foundation
import Testing

/// Values of the demo peripherals, end to end: bluez-sim → BlueZ D-Bus API → bridge → mosquitto
/// → a `mosquitto_sub` subscriber, checked for raw bytes and decoding as SPEC §4 says.
@Suite(.timeLimit(.minutes(2)))
struct ValueTests {
    @Test("values of all demo peripherals arrive, raw and decoded")
    func valuesOfAllDemoPeripherals() async throws {
        try await Harness.with { harness in
            let hr = "ble/\(Demo.heartRate)"
            let env = "ble/\(Demo.environment)"

            // Heart rate measurement (notify, 1 Hz): two notifications.
            let first = try await harness.waitFor("\(hr)/180d/2a37")
            let second = try await harness.waitFor("\(hr)/180d/2a37", after: first.index + 1)
            try Check.heartRate(first)
            try Check.heartRate(second)

            // Body sensor location (read once): 01 = chest.
            let location = try await harness.waitFor("\(hr)/180d/2a38")
            let locationObject = try #require(location.object, "\(location)")
            #expect(locationObject["raw"] as? String == "01")
            #expect(JSON.integer(locationObject["value"]) == 1)

            // Battery level (read once + notify every 30 s): integer percent == the raw byte.
            let battery = try await harness.waitFor("\(hr)/180f/2a19")
            let batteryObject = try #require(battery.object, "\(battery)")
            let batteryBytes = try #require(Hex.bytes(batteryObject["raw"] as? String ?? "x"), "\(battery)")
            #expect(batteryBytes.count == 1)
            #expect(JSON.integer(batteryObject["value"]) == batteryBytes.first.map(Int.init))
            #expect((0...100).contains(JSON.integer(batteryObject["value"]) ?? -1))

            // Temperature: sint16 / 100 °C; humidity: uint16 / 100 %.
            for _ in 0..<2 {
                let temperature = try await harness.waitFor("\(env)/181a/2a6e", after: harness.observer.count)
                try Check.scaled(temperature, signed: true, range: -10...50)
                let humidity = try await harness.waitFor("\(env)/181a/2a6f", after: harness.observer.count)
                try Check.scaled(humidity, signed: false, range: 0...100)
            }

            // The echo device: its readable characteristics are read once; no format → hex.
            let echoRead = try await harness.waitFor("ble/\(Demo.echo)/\(Demo.echoService)/\(Demo.echoWrite)")
            let echoObject = try #require(echoRead.object, "\(echoRead)")
            #expect(echoObject["raw"] is String)
            #expect(echoObject["value"] as? String == echoObject["raw"] as? String)

            // Every value message so far has a lowercase hex "raw" and a "value", and none is retained.
            let values = harness.observer.messages("ble/+/+/+").filter { !$0.topic.hasPrefix("ble/bridge/") }
            #expect(values.count >= 6)
            for message in values {
                let object = try #require(message.object, "not a JSON object: \(message)")
                let raw = try #require(object["raw"] as? String, "no raw: \(message)")
                #expect(Hex.isLowercase(raw), "raw is not lowercase hex: \(message)")
                #expect(object["value"] != nil, "no value: \(message)")
                #expect(!message.retained, "value messages are not retained: \(message)")
            }
        }
    }

    @Test("bridge.yaml (the demo's config) names devices, services and characteristics")
    func demoConfigurationNames() async throws {
        var options = HarnessOptions()
        options.configFile = Paths.demoConfig
        try await Harness.with(options) { harness in
            try Check.heartRate(try await harness.waitFor("ble/polar_h10/180d/heart_rate"))
            let location = try await harness.waitFor("ble/polar_h10/180d/body_sensor_location")
            #expect(JSON.integer(location.object?["value"]) == 1)
            let battery = try await harness.waitFor("ble/polar_h10/180f/battery")
            #expect(JSON.integer(battery.object?["value"]) != nil)
            try Check.scaled(try await harness.waitFor("ble/env_sensor/environment/temperature"), signed: true, range: -10...50)
            try Check.scaled(try await harness.waitFor("ble/env_sensor/environment/humidity"), signed: false, range: 0...100)
            for name in ["polar_h10", "env_sensor", "echo"] {
                try await harness.waitFor("ble/\(name)/availability") { $0.payload == "online" }
            }
            let devices = try await harness.waitFor("ble/bridge/devices") { message in
                let names = Set((JSON.array(message.payload) ?? []).compactMap { ($0 as? [String: Any])?["name"] as? String })
                return names.isSuperset(of: ["polar_h10", "env_sensor", "echo"])
            }
            #expect(!devices.payload.contains(Demo.heartRate), "a named device is listed under its address: \(devices)")
        }
    }
}

/// Decoding checks shared by the tests: each parses `raw` itself and compares with `value`.
enum Check {
    /// Heart Rate Measurement (2A37): flags, bpm (uint8/uint16), contact, energy, RR intervals.
    static func heartRate(_ message: MQTTMessage, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let object = try #require(message.object, "not a JSON object: \(message)", sourceLocation: sourceLocation)
        let raw = try #require(object["raw"] as? String, "no raw: \(message)", sourceLocation: sourceLocation)
        let bytes = try #require(Hex.bytes(raw), "raw is not hex: \(message)", sourceLocation: sourceLocation)
        let value = try #require(object["value"] as? [String: Any], "value is not an object: \(message)", sourceLocation: sourceLocation)
        try #require(bytes.count >= 2, "too short: \(message)", sourceLocation: sourceLocation)
        let flags = bytes[0]
        var offset = 1
        let bpmSize = flags & 0x01 != 0 ? 2 : 1
        let bpm = try #require(Hex.uintLE(bytes, at: offset, size: bpmSize), sourceLocation: sourceLocation)
        offset += bpmSize
        #expect(JSON.integer(value["bpm"]) == bpm, "bpm: \(message)", sourceLocation: sourceLocation)
        #expect((30...230).contains(bpm), "implausible bpm: \(message)", sourceLocation: sourceLocation)
        if flags & 0x04 != 0 {
            #expect(JSON.bool(value["contact"]) == (flags & 0x02 != 0), "contact: \(message)", sourceLocation: sourceLocation)
        } else {
            #expect(value["contact"] == nil, "contact without the flag: \(message)", sourceLocation: sourceLocation)
        }
        if flags & 0x08 != 0 {
            let energy = Hex.uintLE(bytes, at: offset, size: 2)
            offset += 2
            #expect(JSON.integer(value["energy"]) == energy, "energy: \(message)", sourceLocation: sourceLocation)
        } else {
            #expect(value["energy"] == nil, "energy without the flag: \(message)", sourceLocation: sourceLocation)
        }
        if flags & 0x10 != 0 {
            var expected: [Double] = []
            while let interval = Hex.uintLE(bytes, at: offset, size: 2) {
                expected.append(Double(interval) / 1024)
                offset += 2
            }
            let rr = (value["rr"] as? [Any] ?? []).compactMap { JSON.double($0) }
            #expect(rr.count == expected.count, "rr: \(message)", sourceLocation: sourceLocation)
            for (got, want) in zip(rr, expected) {
                #expect(abs(got - want) < 1e-6, "rr \(got) != \(want): \(message)", sourceLocation: sourceLocation)
            }
        } else {
            #expect(value["rr"] == nil, "rr without the flag: \(message)", sourceLocation: sourceLocation)
        }
    }

    /// Temperature (sint16 / 100) or humidity (uint16 / 100).
    static func scaled(
        _ message: MQTTMessage, signed: Bool, range: ClosedRange<Double>, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let object = try #require(message.object, "not a JSON object: \(message)", sourceLocation: sourceLocation)
        let raw = try #require(object["raw"] as? String, "no raw: \(message)", sourceLocation: sourceLocation)
        let bytes = try #require(Hex.bytes(raw), "raw is not hex: \(message)", sourceLocation: sourceLocation)
        try #require(bytes.count == 2, "not 2 bytes: \(message)", sourceLocation: sourceLocation)
        let unsigned = Hex.uintLE(bytes, at: 0, size: 2)!
        let expected = Double(signed ? Int(Int16(truncatingIfNeeded: unsigned)) : unsigned) / 100
        let value = try #require(JSON.double(object["value"]), "value is not a number: \(message)", sourceLocation: sourceLocation)
        #expect(abs(value - expected) < 1e-9, "value \(value) != \(expected): \(message)", sourceLocation: sourceLocation)
        #expect(range.contains(value), "implausible value: \(message)", sourceLocation: sourceLocation)
    }
}
