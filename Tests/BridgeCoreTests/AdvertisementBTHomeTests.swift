import Testing

@testable import BridgeCore

/// The BTHome v2 decoder against the examples of the format's own object table
/// (bthome.io/format), one per object id, and against frames built to test naming, events,
/// the device-information byte, truncation and unknown objects.
@Suite struct AdvertisementBTHomeTests {
    static let address = BluetoothAddress("A4:C1:38:8D:18:B2")!

    static func bytes(_ hex: String) -> [UInt8] {
        (try? Hex.decode(hex)) ?? []
    }

    static func decode(_ hex: String, bindkey: [UInt8]? = nil) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        let frame = AdvertisementFrame(
            address: address, serviceData: [BluetoothUUID(uuid16: 0xFCD2): bytes(hex)], manufacturerData: [:])
        return AdvertisementDecoder.decode(frame, bindkey: bindkey)
    }

    static func values(_ hex: String) throws -> String {
        let decoded = try #require(try decode(hex)?.get())
        return JSONValue.object(decoded.values).jsonString
    }

    /// The example of each object id in the format's tables (after the device-information byte
    /// 0x40), and the values it must give.
    static let formatExamples: [(String, String)] = [
        ("0161", #"{"battery":97}"#),
        ("02CA09", #"{"temperature":25.06}"#),
        ("03BF13", #"{"humidity":50.55}"#),
        ("04138A01", #"{"pressure":1008.83}"#),
        ("05138A14", #"{"illuminance":13460.67}"#),
        ("065E1F", #"{"mass_kg":80.3}"#),
        ("073E1D", #"{"mass_lb":74.86}"#),
        ("08CA06", #"{"dewpoint":17.38}"#),
        ("0960", #"{"count":96}"#),
        ("0A138A14", #"{"energy":1346.067}"#),
        ("0B021B00", #"{"power":69.14}"#),
        ("0C020C", #"{"voltage":3.074}"#),
        ("0D120C", #"{"pm2_5":3090}"#),
        ("0E021C", #"{"pm10":7170}"#),
        ("0F01", #"{"generic_boolean":true}"#),
        ("1001", #"{"power_on":true}"#),
        ("1100", #"{"opening":false}"#),
        ("12E204", #"{"co2":1250}"#),
        ("133301", #"{"tvoc":307}"#),
        ("14020C", #"{"moisture":30.74}"#),
        ("1501", #"{"battery_low":true}"#),
        ("1601", #"{"battery_charging":true}"#),
        ("1700", #"{"carbon_monoxide":false}"#),
        ("1801", #"{"cold":true}"#),
        ("1900", #"{"connectivity":false}"#),
        ("1A00", #"{"door":false}"#),
        ("1B00", #"{"garage_door":false}"#),
        ("1C01", #"{"gas_detected":true}"#),
        ("1D00", #"{"heat":false}"#),
        ("1E01", #"{"light":true}"#),
        ("1F01", #"{"lock":true}"#),
        ("2001", #"{"moisture_detected":true}"#),
        ("2101", #"{"motion":true}"#),
        ("2200", #"{"moving":false}"#),
        ("2301", #"{"occupancy":true}"#),
        ("2400", #"{"plug":false}"#),
        ("2501", #"{"presence":true}"#),
        ("2600", #"{"problem":false}"#),
        ("2701", #"{"running":true}"#),
        ("2800", #"{"safety":false}"#),
        ("2901", #"{"smoke":true}"#),
        ("2A00", #"{"sound":false}"#),
        ("2B01", #"{"tamper":true}"#),
        ("2C00", #"{"vibration":false}"#),
        ("2D01", #"{"window":true}"#),
        ("2E23", #"{"humidity":35}"#),
        ("2F23", #"{"moisture":35}"#),
        ("3A00", #"{"button":"none"}"#),
        ("3A01", #"{"button":"press"}"#),
        ("3A02", #"{"button":"double_press"}"#),
        ("3A03", #"{"button":"triple_press"}"#),
        ("3A04", #"{"button":"long_press"}"#),
        ("3A05", #"{"button":"long_double_press"}"#),
        ("3A06", #"{"button":"long_triple_press"}"#),
        ("3A80", #"{"button":"hold_press"}"#),
        ("3A81", #"{"button":"hold_release"}"#),
        ("3B0002", #"{"command":"toggle"}"#),
        ("3C0103", #"{"dimmer":"rotate_left","dimmer_steps":3}"#),
        ("3C0203", #"{"dimmer":"rotate_right","dimmer_steps":3}"#),
        ("3C0000", #"{"dimmer":"none"}"#),
        ("3D0960", #"{"count":24585}"#),
        ("3E2A2C0960", #"{"count":1611213866}"#),
        ("3F020C", #"{"rotation":307.4}"#),
        ("400C00", #"{"distance_mm":12}"#),
        ("414E00", #"{"distance_m":7.8}"#),
        ("424E3400", #"{"duration":13.39}"#),
        ("434E34", #"{"current":13.39}"#),
        ("444E34", #"{"speed":133.9}"#),
        ("451101", #"{"temperature":27.3}"#),
        ("4632", #"{"uv_index":5.0}"#),
        ("478756", #"{"volume":2215.1}"#),
        ("48DC87", #"{"volume_ml":34780}"#),
        ("49DC87", #"{"volume_flow_rate":34.78}"#),
        ("4A020C", #"{"voltage":307.4}"#),
        ("4B138A14", #"{"gas":1346.067}"#),
        ("4C41018A01", #"{"gas":25821.505}"#),
        ("4D12138A14", #"{"energy":344593.17}"#),
        ("4E87562A01", #"{"volume":19551.879}"#),
        ("4F87562A01", #"{"water":19551.879}"#),
        ("505D396164", #"{"timestamp":1684093277}"#),
        ("518756", #"{"acceleration":22.151}"#),
        ("528756", #"{"gyroscope":22.151}"#),
        ("530C48656C6C6F20576F726C6421", #"{"text":"Hello World!"}"#),
        ("540C48656C6C6F20576F726C6421", #"{"raw":"48656c6c6f20576f726c6421"}"#),
        ("5587562A01", #"{"volume_storage":19551.879}"#),
        ("560C04", #"{"conductivity":1036}"#),
        ("5713", #"{"temperature":19}"#),
        ("58FF", #"{"temperature":-0.35}"#),
        ("5823", #"{"temperature":12.25}"#),
        ("59FF", #"{"count":-1}"#),
        ("5AFFFF", #"{"count":-1}"#),
        ("5BFFFFFFFF", #"{"count":-1}"#),
        ("5C02FB0000", #"{"power":642.58}"#),
        ("5D01FF", #"{"current":-0.255}"#),
        ("5E3105", #"{"direction":13.29}"#),
        ("5F1A00", #"{"precipitation":2.6}"#),
        ("6001", #"{"channel":1}"#),
        ("61B80B", #"{"rotational_speed":3000}"#),
        ("62FFFFFFFF", #"{"speed":-1e-06}"#),
        ("63FFFFFFFF", #"{"acceleration":-1e-06}"#),
        ("6405", #"{"light_level":5}"#),
        ("6502", #"{"settings_revision":2}"#),
        ("F00100", #"{"device_type_id":1}"#),
        ("F100010204", #"{"firmware_version":"4.2.1.0"}"#),
        ("F2000106", #"{"firmware_version":"6.1.0"}"#),
    ]

    @Test(arguments: formatExamples)
    func formatExample(_ example: (String, String)) throws {
        let decoded = try #require(try Self.decode("40" + example.0)?.get())
        #expect(decoded.decoder == "bthome_v2")
        #expect(JSONValue.object(decoded.values).jsonString == example.1, "object \(example.0)")
        #expect(decoded.packetID == nil)
        #expect(!decoded.encrypted && decoded.counter == nil && !decoded.triggerBased)
    }

    @Test func everyObjectIDHasAnExample() {
        let covered = Set(Self.formatExamples.map { Self.bytes($0.0)[0] })
        let missing = BTHomeObject.all.map(\.id).filter { $0 != 0x00 && !covered.contains($0) }
        #expect(missing.isEmpty, "object ids without an example: \(missing)")
        // One row per id, ids ascending.
        #expect(BTHomeObject.all.map(\.id) == BTHomeObject.all.map(\.id).sorted())
        #expect(Set(BTHomeObject.all.map(\.id)).count == BTHomeObject.all.count)
    }

    @Test func packetIDAndSeveralObjects() throws {
        // packet id 17, battery 91 %, temperature 21.5 °C, humidity 45.12 %: SPEC §7's example.
        let decoded = try #require(try Self.decode("40 0011 015B 026608 03A011")?.get())
        #expect(decoded.packetID == 17)
        #expect(JSONValue.object(decoded.values).jsonString == #"{"battery":91,"temperature":21.5,"humidity":45.12}"#)
    }

    @Test func shellyBluHTDisplayFrame() throws {
        // bthome-ble's test frame of a Shelly BLU H&T Display ZB (packet id 46).
        let decoded = try #require(try Self.decode("40002e01641e012e34451601")?.get())
        #expect(decoded.packetID == 46)
        #expect(
            JSONValue.object(decoded.values).jsonString == #"{"battery":100,"light":true,"humidity":52,"temperature":27.8}"#)
    }

    @Test func repeatedNamesGetSuffixes() throws {
        #expect(try Self.values("40 3A01 3A00 3A04") == #"{"button":"press","button_2":"none","button_3":"long_press"}"#)
        // Different objects of one name share the numbering, as in Home Assistant.
        #expect(try Self.values("40 02CA09 451101 5713") == #"{"temperature":25.06,"temperature_2":27.3,"temperature_3":19}"#)
        #expect(
            try Self.values("40 3C0103 3C0205")
                == #"{"dimmer":"rotate_left","dimmer_steps":3,"dimmer_2":"rotate_right","dimmer_2_steps":5}"#)
        #expect(try Self.values("40 2D01 2D00") == #"{"window":true,"window_2":false}"#)
    }

    @Test func undefinedEventCodesAreSkippedButCounted() throws {
        #expect(try Self.values("40 3A07 3A01") == #"{"button_2":"press"}"#)
        #expect(try Self.values("40 3C0905") == "{}")
        #expect(try Self.values("40 3B0009") == "{}")
    }

    @Test func commandWithArguments() throws {
        #expect(try Self.values("40 3B02030A0B") == #"{"command":"step_up","command_args":"0a0b"}"#)
        // The high 3 bits of the length byte are reserved.
        #expect(try Self.values("40 3BE001") == #"{"command":"on"}"#)
    }

    @Test func textEdgeCases() throws {
        #expect(try Self.values("40 5300") == #"{"text":""}"#)
        #expect(try Self.values("40 5400") == #"{"raw":""}"#)
        // Invalid UTF-8 is repaired, never passed on.
        #expect(try Self.values("40 5302C328") == #"{"text":"\#u{FFFD}("}"#)
        #expect(try Self.values("40 5303E282AC") == #"{"text":"€"}"#)
    }

    @Test func deviceInformationByte() throws {
        let trigger = try #require(try Self.decode("44 3A01")?.get())
        #expect(trigger.triggerBased)
        #expect(!trigger.encrypted)
        // Bit 1: the MAC (reversed) precedes the objects.
        let withMAC = try #require(try Self.decode("42 B2188D38C1A4 0161")?.get())
        #expect(JSONValue.object(withMAC.values).jsonString == #"{"battery":97}"#)
        // Just the device-information byte: a valid frame without values.
        #expect(try Self.values("40") == "{}")
    }

    @Test func otherVersionsAreRejected() {
        #expect(Self.decode("E1 02000C04 04138A01") == .failure(.unsupportedVersion(7)))
        #expect(Self.decode("00 0161") == .failure(.unsupportedVersion(0)))
        #expect(Self.decode("20 0161") == .failure(.unsupportedVersion(1)))
    }

    @Test func truncatedFrames() {
        #expect(Self.decode("") == .failure(.truncated("device information")))
        #expect(Self.decode("40 02CA") == .failure(.truncated("temperature")))
        #expect(Self.decode("40 0161 04138A") == .failure(.truncated("pressure")))
        #expect(Self.decode("40 53") == .failure(.truncated("text")))
        #expect(Self.decode("40 530548656C") == .failure(.truncated("text")))
        #expect(Self.decode("40 3B03 01") == .failure(.truncated("command")))
        #expect(Self.decode("40 3C01") == .failure(.truncated("dimmer")))
        #expect(Self.decode("40 00") == .failure(.truncated("packet_id")))
        #expect(Self.decode("42 B2188D38") == .failure(.truncated("MAC address")))
    }

    @Test func unknownObjectStopsDecoding() {
        #expect(Self.decode("40 02CA09 3001 0161") == .failure(.unknownObject(0x30)))
        #expect(Self.decode("40 FF") == .failure(.unknownObject(0xFF)))
        for id in 0...255 where BTHomeObject.forID(UInt8(id)) == nil {
            #expect(Self.decode("40" + Hex.encode([UInt8(id)]) + "0000000000") == .failure(.unknownObject(UInt8(id))))
        }
    }

    @Test func errorsHaveCodesAndMessages() {
        let errors: [AdvertisementDecodeError] = [
            .truncated("text"), .unknownObject(0x30), .unsupportedVersion(7), .encryptedWithoutKey, .invalidKey(3), .badMIC,
            .unencryptedWithKey, .unexpectedLength(uuid: "181a", length: 14),
        ]
        #expect(Set(errors.map(\.code)).count == errors.count)
        for error in errors {
            #expect(!error.description.isEmpty)
            #expect(error.code.allSatisfy { $0.isLowercase || $0 == "_" })
        }
        #expect(AdvertisementDecodeError.unknownObject(0x30).description.contains("0x30"))
    }

    @Test func encoderBuildsWhatTheDecoderReads() throws {
        let objects = [
            BTHomeEncoder.Object(id: 0x00, raw: 17),
            try #require(BTHomeEncoder.Object(id: 0x01, value: 91)),
            try #require(BTHomeEncoder.Object(id: 0x02, value: 21.5)),
            try #require(BTHomeEncoder.Object(id: 0x03, value: 45.12)),
            try #require(BTHomeEncoder.Object(id: 0x58, value: 12.25)),
            try #require(BTHomeEncoder.Object(id: 0x21, value: 1)),
            try #require(BTHomeEncoder.Object.button("double_press")),
            try #require(BTHomeEncoder.Object.dimmer("rotate_right", steps: 4)),
            try #require(BTHomeEncoder.Object.text("hi")),
            try #require(BTHomeEncoder.Object(id: 0x3B, content: [0x02, 0xAB])),
        ]
        let data = BTHomeEncoder.serviceData(objects, triggerBased: true)
        #expect(Array(data.prefix(6)) == [0x44, 0x00, 0x11, 0x01, 0x5B, 0x02])
        let decoded = try #require(try Self.decode(Hex.encode(data))?.get())
        #expect(decoded.packetID == 17)
        #expect(decoded.triggerBased)
        #expect(
            JSONValue.object(decoded.values).jsonString
                == #"{"battery":91,"temperature":21.5,"humidity":45.12,"temperature_2":12.25,"motion":true,"button":"double_press","dimmer":"rotate_right","dimmer_steps":4,"text":"hi","command":"toggle","command_args":"ab"}"#
        )
        // Out of range, unknown id, or the wrong kind of object: nil.
        #expect(BTHomeEncoder.Object(id: 0x01, value: 256) == nil)
        #expect(BTHomeEncoder.Object(id: 0x02, value: -327.69) == nil)
        #expect(BTHomeEncoder.Object(id: 0x02, value: -327.68) != nil)
        #expect(BTHomeEncoder.Object(id: 0x30, value: 1) == nil)
        #expect(BTHomeEncoder.Object(id: 0x53, value: 1) == nil)
        #expect(BTHomeEncoder.Object(id: 0x02, value: .nan) == nil)
        #expect(BTHomeEncoder.Object.button("wave") == nil)
        #expect(BTHomeEncoder.Object(id: 0x53, content: [UInt8](repeating: 0x41, count: 256)) == nil)
    }

    @Test func encoderRoundTripsEveryNumericObject() throws {
        var random = SplitMix64(seed: 7)
        for object in BTHomeObject.all where object.kind == .number || object.kind == .timestamp {
            for _ in 0..<50 {
                let bits = UInt64(8 * object.length)
                var raw = Int64(bitPattern: random.next() & ((1 << bits) - 1))
                if object.signed, raw >> (bits - 1) & 1 == 1 { raw -= 1 << bits }
                let data = BTHomeEncoder.serviceData([BTHomeEncoder.Object(id: object.id, raw: raw)])
                let decoded = try #require(try Self.decode(Hex.encode(data))?.get())
                let value = try #require(decoded.values[object.name]?.doubleValue)
                let expected = Double(raw) * object.factor
                #expect(abs(value - expected) <= 1e-9 * max(1, abs(expected)), "0x\(Hex.encode([object.id])) raw \(raw)")
                // And back from the value.
                let again = try #require(BTHomeEncoder.Object(id: object.id, value: value))
                #expect(again == BTHomeEncoder.Object(id: object.id, raw: raw), "0x\(Hex.encode([object.id])) raw \(raw)")
            }
        }
    }
}
