import Testing

@testable import BridgeCore

@Suite struct ValueFormatDecodingTests {
    func json(_ format: ValueFormat, _ bytes: [UInt8]) -> String {
        format.decode(bytes).jsonString
    }

    @Test func heartRateMeasurement() {
        let format = ValueFormat.heartRateMeasurement
        // 8-bit bpm, no other fields.
        #expect(json(format, [0x00, 0x48]) == #"{"bpm":72}"#)
        // 16-bit bpm.
        #expect(json(format, [0x01, 0x2C, 0x01]) == #"{"bpm":300}"#)
        // Contact supported and detected, one RR interval (829/1024 s).
        #expect(json(format, [0x16, 0x48, 0x3D, 0x03]) == #"{"bpm":72,"contact":true,"rr":[0.8095703125]}"#)
        // Contact supported but not detected.
        #expect(json(format, [0x04, 0x48]) == #"{"bpm":72,"contact":false}"#)
        // Contact bit without the "supported" bit: no contact field.
        #expect(json(format, [0x02, 0x48]) == #"{"bpm":72}"#)
        // Energy expended.
        #expect(json(format, [0x08, 0x50, 0x78, 0x00]) == #"{"bpm":80,"energy":120}"#)
        // Everything: 16-bit bpm, contact, energy, three RR intervals.
        #expect(
            json(format, [0x1F, 0x48, 0x00, 0x78, 0x00, 0x3D, 0x03, 0x00, 0x02, 0x00, 0x04])
                == #"{"bpm":72,"contact":true,"energy":120,"rr":[0.8095703125,0.5,1.0]}"#)
        // RR flag with no intervals.
        #expect(json(format, [0x10, 0x48]) == #"{"bpm":72,"rr":[]}"#)
        // Polar H10-style: 8-bit bpm, contact, two RR intervals.
        #expect(json(format, [0x16, 0x3C, 0x00, 0x04, 0x10, 0x04]) == #"{"bpm":60,"contact":true,"rr":[1.0,1.015625]}"#)
    }

    @Test(arguments: [
        [] as [UInt8], [0x00], [0x01, 0x48], [0x08, 0x48, 0x78], [0x10, 0x48, 0x3D], [0x00, 0x48, 0x00], [0x19, 0x48],
    ])
    func heartRateGarbageFallsBackToHex(bytes: [UInt8]) {
        #expect(ValueFormat.heartRateMeasurement.decode(bytes) == .string(Hex.encode(bytes)))
    }

    @Test func sigFormats() {
        #expect(ValueFormat.batteryLevel.decode([0x5A]) == .integer(90))
        #expect(json(.temperature, [0x66, 0x08]) == "21.5")
        #expect(json(.temperature, [0xF3, 0xFD]) == "-5.25")
        #expect(json(.temperature, [0x01, 0x00]) == "0.01")
        #expect(ValueFormat.temperature.decode([0x00, 0x80]) == .null)
        #expect(json(.humidity, [0xC6, 0x11]) == "45.5")
        #expect(json(.humidity, [0x10, 0x27]) == "100.0")
        #expect(ValueFormat.humidity.decode([0xFF, 0xFF]) == .null)
        #expect(ValueFormat.bodySensorLocation.decode([0x01]) == .integer(1))
        // Wrong lengths fall back to hex.
        #expect(ValueFormat.batteryLevel.decode([0x5A, 0x00]) == .string("5a00"))
        #expect(ValueFormat.temperature.decode([0x66]) == .string("66"))
    }

    @Test func integerFormats() {
        #expect(ValueFormat.uint8.decode([0xFF]) == .integer(255))
        #expect(ValueFormat.sint8.decode([0xFF]) == .integer(-1))
        #expect(ValueFormat.uint16.decode([0x34, 0x12]) == .integer(0x1234))
        #expect(ValueFormat.sint16.decode([0xFE, 0xFF]) == .integer(-2))
        #expect(ValueFormat.uint32.decode([0xFF, 0xFF, 0xFF, 0xFF]) == .integer(4_294_967_295))
        #expect(ValueFormat.sint32.decode([0x00, 0x00, 0x00, 0x80]) == .integer(-2_147_483_648))
        #expect(ValueFormat.uint16.decode([0x01]) == .string("01"))
        #expect(ValueFormat.uint32.decode([0x01, 0x02, 0x03]) == .string("010203"))
    }

    @Test func floatFormats() {
        #expect(json(.float32, [0x00, 0x00, 0xC0, 0x3F]) == "1.5")
        #expect(json(.float32, [0xCD, 0xCC, 0xCC, 0x3D]) == "0.1")  // 0.1f reads 0.1
        #expect(ValueFormat.float32.decode([0x00, 0x00, 0xC0, 0x7F]) == .null)  // NaN
        #expect(json(.float64, [0, 0, 0, 0, 0, 0, 0x35, 0x40]) == "21.0")
        #expect(ValueFormat.float64.decode([0, 0, 0, 0, 0, 0, 0xF0, 0x7F]) == .null)  // +inf
        // SFLOAT: 366 × 10^-1, -15 × 10^-1, 2 × 10^2, NaN.
        #expect(json(.sfloat, [0x6E, 0xF1]) == "36.6")
        #expect(json(.sfloat, [0xF1, 0xFF]) == "-1.5")
        #expect(json(.sfloat, [0x02, 0x20]) == "200.0")
        #expect(ValueFormat.sfloat.decode([0xFF, 0x07]) == .null)
        #expect(ValueFormat.sfloat.decode([0x00, 0x08]) == .null)
        // FLOAT: 366 × 10^-1, NaN.
        #expect(json(.float, [0x6E, 0x01, 0x00, 0xFF]) == "36.6")
        #expect(json(.float, [0xFF, 0xFF, 0xFF, 0xFC]) == "-0.0001")
        #expect(ValueFormat.float.decode([0xFF, 0xFF, 0x7F, 0x00]) == .null)
    }

    @Test func textAndHex() {
        #expect(ValueFormat.utf8.decode(Array("Polar H10".utf8)) == .string("Polar H10"))
        #expect(ValueFormat.utf8.decode(Array("abc".utf8) + [0, 0]) == .string("abc"))
        #expect(ValueFormat.utf8.decode([0x68, 0xC3]) == .string("68c3"))  // invalid UTF-8 → hex
        #expect(ValueFormat.hex.decode([0x01, 0xFF]) == .string("01ff"))
        #expect(ValueFormat.hex.decode([]) == .string(""))
    }

    @Test func neverTrapsOnAnyInput() {
        var random = SplitMix64(seed: 42)
        for _ in 0..<2000 {
            let bytes = (0..<Int(random.next() % 24)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            for format in ValueFormat.allCases {
                let value = format.decode(bytes)
                // Whatever comes out is valid JSON.
                #expect((try? JSONParser.parse(value.jsonBytes)) != nil)
            }
        }
    }

    @Test func defaultsPerUUID() {
        #expect(ValueFormat.default(for: BluetoothUUID(uuid16: 0x2A37)) == .heartRateMeasurement)
        #expect(ValueFormat.default(for: BluetoothUUID(uuid16: 0x2A19)) == .batteryLevel)
        #expect(ValueFormat.default(for: BluetoothUUID(uuid16: 0x2A6E)) == .temperature)
        #expect(ValueFormat.default(for: BluetoothUUID(uuid16: 0x2A6F)) == .humidity)
        #expect(ValueFormat.default(for: BluetoothUUID(uuid16: 0x2A38)) == .bodySensorLocation)
        #expect(ValueFormat.default(for: BluetoothUUID(uuid16: 0xFFE1)) == .hex)
        #expect(ValueFormat(rawValue: "heart_rate_measurement") == .heartRateMeasurement)
        #expect(ValueFormat(rawValue: "battery_level") == .batteryLevel)
        #expect(ValueFormat(rawValue: "body_sensor_location") == .bodySensorLocation)
    }
}

@Suite struct ValueFormatEncodingTests {
    func code(_ format: ValueFormat, _ value: JSONValue) -> ValueEncodingError.Code? {
        do {
            _ = try format.encode(value)
            return nil
        } catch {
            return error.code
        }
    }

    @Test func integers() throws {
        #expect(try ValueFormat.uint8.encode(255) == [0xFF])
        #expect(try ValueFormat.uint8.encode(.number(3.0)) == [0x03])
        #expect(try ValueFormat.uint16.encode(0x1234) == [0x34, 0x12])
        #expect(try ValueFormat.uint32.encode(4_294_967_295) == [0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try ValueFormat.sint8.encode(-128) == [0x80])
        #expect(try ValueFormat.sint16.encode(-2) == [0xFE, 0xFF])
        #expect(try ValueFormat.sint32.encode(-2_147_483_648) == [0x00, 0x00, 0x00, 0x80])
        #expect(code(.uint8, 256) == .outOfRange)
        #expect(code(.uint8, -1) == .outOfRange)
        #expect(code(.sint8, -129) == .outOfRange)
        #expect(code(.sint16, 32768) == .outOfRange)
        #expect(code(.uint32, 4_294_967_296) == .outOfRange)
        #expect(code(.uint8, 2.5) == .notAnInteger)
        #expect(code(.uint16, .number(1e10)) == .outOfRange)
        #expect(code(.uint8, "5") == .wrongType)
        #expect(code(.uint8, nil) == .wrongType)
        #expect(code(.uint8, true) == .wrongType)
    }

    @Test func sigFormats() throws {
        #expect(try ValueFormat.batteryLevel.encode(90) == [0x5A])
        #expect(code(.batteryLevel, 101) == .outOfRange)
        #expect(try ValueFormat.temperature.encode(21.5) == [0x66, 0x08])
        #expect(try ValueFormat.temperature.encode(-5.25) == [0xF3, 0xFD])
        #expect(code(.temperature, 400) == .outOfRange)
        #expect(try ValueFormat.humidity.encode(45.5) == [0xC6, 0x11])
        #expect(code(.humidity, -1) == .outOfRange)
        #expect(try ValueFormat.bodySensorLocation.encode(1) == [0x01])
        let measurement: JSONValue = ["bpm": 72, "contact": true, "energy": 120, "rr": [0.8095703125, 0.5]]
        let bytes = try ValueFormat.heartRateMeasurement.encode(measurement)
        #expect(bytes == [0x1E, 0x48, 0x78, 0x00, 0x3D, 0x03, 0x00, 0x02])
        #expect(ValueFormat.heartRateMeasurement.decode(bytes) == measurement)
        #expect(try ValueFormat.heartRateMeasurement.encode(["bpm": 300]) == [0x01, 0x2C, 0x01])
        #expect(code(.heartRateMeasurement, ["contact": true]) == .wrongType)
        #expect(code(.heartRateMeasurement, ["bpm": 70000]) == .outOfRange)
        #expect(code(.heartRateMeasurement, 72) == .wrongType)
    }

    @Test func floats() throws {
        #expect(try ValueFormat.float32.encode(1.5) == [0x00, 0x00, 0xC0, 0x3F])
        #expect(code(.float32, .number(1e39)) == .outOfRange)
        #expect(try ValueFormat.float64.encode(21) == [0, 0, 0, 0, 0, 0, 0x35, 0x40])
        #expect(try ValueFormat.sfloat.encode(36.6) == [0x6E, 0xF1])
        #expect(try ValueFormat.sfloat.encode(-1.5) == [0xF1, 0xFF])
        #expect(try ValueFormat.sfloat.encode(0) == [0x00, 0x00])
        #expect(code(.sfloat, .number(1e20)) == .outOfRange)
        #expect(try ValueFormat.float.encode(36.6) == [0x6E, 0x01, 0x00, 0xFF])
        #expect(code(.float, "1") == .wrongType)
        // Round trips through the decoder.
        for value in [0.5, 98.6, -40.0, 1234.0, 0.001] {
            #expect(ValueFormat.sfloat.decode(try ValueFormat.sfloat.encode(.number(value))).doubleValue == value)
            #expect(ValueFormat.float.decode(try ValueFormat.float.encode(.number(value))).doubleValue == value)
        }
    }

    @Test func textAndHex() throws {
        #expect(try ValueFormat.hex.encode("01ff") == [0x01, 0xFF])
        #expect(try ValueFormat.hex.encode("01 ff") == [0x01, 0xFF])
        #expect(try ValueFormat.hex.encode("0x01ff") == [0x01, 0xFF])
        #expect(code(.hex, "01f") == .invalidHex)
        #expect(code(.hex, "zz") == .invalidHex)
        #expect(code(.hex, 1) == .wrongType)
        #expect(try ValueFormat.utf8.encode("hé") == [0x68, 0xC3, 0xA9])
        #expect(code(.utf8, 5) == .wrongType)
    }

    @Test func describesErrors() {
        do {
            _ = try ValueFormat.uint8.encode(300)
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "uint8: value 300 is out of range 0...255")
        }
    }
}

@Suite struct ValuePayloadTests {
    @Test func buildsPayloads() throws {
        let heartRate = ValuePayload.make(raw: [0x16, 0x48, 0x3D, 0x03], format: .heartRateMeasurement)
        #expect(
            String(decoding: heartRate, as: UTF8.self)
                == #"{"raw":"16483d03","value":{"bpm":72,"contact":true,"rr":[0.8095703125]}}"#)
        let hex = ValuePayload.make(raw: [0x01, 0xFF], format: .hex)
        #expect(String(decoding: hex, as: UTF8.self) == #"{"raw":"01ff","value":"01ff"}"#)
        let battery = ValuePayload.make(raw: [0x5A], format: .batteryLevel)
        #expect(String(decoding: battery, as: UTF8.self) == #"{"raw":"5a","value":90}"#)
        let garbage = ValuePayload.make(raw: [0x01], format: .temperature)
        #expect(String(decoding: garbage, as: UTF8.self) == #"{"raw":"01","value":"01"}"#)
        var buffer: [UInt8] = []
        ValuePayload.append(raw: [0x00], value: .null, to: &buffer)
        #expect(try JSONParser.parse(buffer) == ["raw": "00", "value": nil])
    }
}

@Suite struct IEEE11073Tests {
    @Test func specialValues() {
        for raw: UInt16 in [0x07FF, 0x0800, 0x07FE, 0x0802, 0x0801] {
            #expect(IEEE11073.decodeSFloat(raw) == nil)
        }
        for raw: UInt32 in [0x007F_FFFF, 0x0080_0000, 0x007F_FFFE, 0x0080_0002, 0x0080_0001] {
            #expect(IEEE11073.decodeFloat(raw) == nil)
        }
    }

    @Test func encodesShortestMantissa() {
        #expect(IEEE11073.encodeSFloat(0.1) == 0xF001)  // 1 × 10^-1
        #expect(IEEE11073.encodeSFloat(2000) == 0x3002)  // 2 × 10^3
        #expect(IEEE11073.encodeSFloat(2047) == 0x10CD)  // 205 × 10^1: 2047 itself is reserved
        #expect(IEEE11073.encodeSFloat(.nan) == nil)
    }
}
