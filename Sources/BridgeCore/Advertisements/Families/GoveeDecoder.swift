/// Govee thermo-hygrometers and the H5055 meat thermometer (SPEC §13), in manufacturer data
/// whose "company id" is no registered company: Govee's own marker `0xEC88`, `0x8801` (the
/// H5179), or `0x0001` followed by `01 01` (H510x/H517x family). Told by that id, the length and
/// the advertised name (`GVH5075_xxxx`, `Govee_H5179_xxxx`, `GV5179_xxxx`):
///
/// | id | value length | models | layout (offsets in the value) |
/// |---|---|---|---|
/// | `0xEC88` | 6 | H5072, H5075, H5129 | packed temperature/humidity at 1–3, battery at 4 |
/// | `0xEC88` | 7 | H5074 | temperature sint16 LE × 0.01 °C at 1, humidity uint16 LE × 0.01 % at 3, battery at 5 |
/// | `0xEC88` | 9 | H5051, H5052, H5071 | as the H5074 |
/// | `0x8801` | 9 | H5179 | as the H5074, at 4 |
/// | `0x0001` | 6 | H5100–H5105, H5110, H5174, H5177, GV5179 (by name only) | packed at 2–4, battery at 5 |
/// | `0x0001` | 8 | H5108 (by name only) | as above |
/// | any | 20, with service UUID `5550` | H5055 | battery at 2, probe group at 3, two probes sint16 LE °C at 5 and 12 |
///
/// The packed encoding is a 24-bit big-endian number: bit 23 the sign of the temperature, the rest
/// `t·1000 + h` with `t` the temperature in 0.1 °C and `h` the humidity in 0.1 %. The battery
/// byte's bit 7 flags a sensor error: then, as for a temperature outside −40…100 °C, only the
/// battery is published. `0x0001` is a registered company id (Ericsson): without a Govee model in
/// the name the frame is not claimed. An iBeacon glued to the value (some firmware puts
/// `4c 00 02 15 "INTELLI_ROCKS_HW…"` in the same AD structure) is cut off first. A frame whose
/// name belongs to another family told by name (Inkbird, ThermoPro, SensorPush) is never Govee's,
/// nor a frame with an `0xEF88` entry (the encrypted H512x buttons and sensors, not in our list).
public enum GoveeDecoder: AdvertisementFamily {
    /// The decoder name in payloads.
    public static let name = "govee"
    /// Govee's marker in the company-id position.
    static let markerEC88: UInt16 = 0xEC88
    /// The H512x family's marker (encrypted frames, not decoded).
    static let markerEF88: UInt16 = 0xEF88
    /// The H5179's marker.
    static let marker8801: UInt16 = 0x8801
    /// The H510x/H517x marker (also Ericsson's real company id).
    static let marker0001: UInt16 = 0x0001
    /// The service UUID the H5055 advertises.
    public static let h5055UUID = BluetoothUUID(uuid16: 0x5550)

    /// Decodes a Govee frame; nil for a frame that is not one.
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        let md = frame.manufacturerData
        guard md[markerEC88] != nil || md[marker8801] != nil || md[marker0001] != nil || frame.serviceUUIDs.contains(h5055UUID)
        else { return nil }
        let code = modelCode(frame.name)
        // The markers are plain data bytes to the other name-told families (an Inkbird `sps` at
        // −50.48 °C starts `88 ec`): a frame whose name is theirs is not Govee's.
        if InkbirdDecoder.claimsName(frame.name) || ThermoProDecoder.claimsName(frame.name)
            || SensorPushDecoder.claimsName(frame.name)
        {
            return nil
        }
        // The H512x buttons and sensors (encrypted, not in our list) send a 24-byte 0xEF88 entry
        // beside a 0xEC88 one that is no reading.
        if frame.manufacturerData[markerEF88] != nil { return nil }
        if let v = frame.manufacturerData[markerEC88] {
            let n = usefulLength(v)
            switch n {
            case 6:
                let model = code.flatMap { $0 == 5072 || $0 == 5075 || $0 == 5129 ? $0 : nil }
                return .success(packed(v, at: 1, model: model))
            case 7:
                return .success(littleEndian(v, at: 1, model: 5074))
            case 9:
                let model = code.flatMap { $0 == 5051 || $0 == 5052 || $0 == 5071 ? $0 : nil } ?? 5051
                return .success(littleEndian(v, at: 1, model: model))
            default:
                break
            }
        }
        if let v = frame.manufacturerData[marker8801], usefulLength(v) == 9 {
            return .success(littleEndian(v, at: 4, model: 5179))
        }
        if let code, let v = frame.manufacturerData[marker0001] {
            let n = usefulLength(v)
            if n == 6, isPackedModel0001(code) {
                return .success(packed(v, at: 2, model: code))
            }
            if n == 8, code == 5108 {
                return .success(packed(v, at: 2, model: code))
            }
        }
        if frame.serviceUUIDs.contains(h5055UUID) {
            for (id, v) in frame.manufacturerData where id != ByteFamilySupport.apple && v.count == 20 {
                return h5055(v)
            }
        }
        return nil
    }

    /// The value's length without an iBeacon glued to its end (25 bytes: `4c 00 02 15` and
    /// `INTELLI_ROCKS_HW…`).
    static func usefulLength(_ v: [UInt8]) -> Int {
        let n = v.count
        guard n > 25 else { return n }
        let s = n - 25
        let tail: StaticString = "INTELLI_ROCKS"
        guard v[s] == 0x4C, v[s + 1] == 0x00, v[s + 2] == 0x02, v[s + 3] == 0x15 else { return n }
        let text = UnsafeBufferPointer(start: tail.utf8Start, count: tail.utf8CodeUnitCount)
        for i in 0..<text.count where v[s + 4 + i] != text[i] { return n }
        return s
    }

    /// The packed temperature/humidity at `offset`..`offset+2` and the battery byte after it.
    /// The caller has checked `offset + 4 <= v.count`.
    static func packed(_ v: [UInt8], at offset: Int, model: Int?) -> DecodedAdvertisement {
        let raw = UInt32(v[offset]) << 16 | UInt32(v[offset + 1]) << 8 | UInt32(v[offset + 2])
        let magnitude = raw & 0x7F_FFFF
        var temperature = Double(magnitude / 1000) / 10
        if raw & 0x80_0000 != 0, temperature != 0 { temperature = -temperature }
        let humidity = Double(magnitude % 1000) / 10
        let status = v[offset + 3]
        var values = JSONObject()
        if status & 0x80 == 0, temperature >= -40, temperature <= 100 {
            values.append("temperature", .number(temperature))
            values.append("humidity", .number(humidity))
        }
        values.append("battery", .integer(Int64(status & 0x7F)))
        return result(values, model: model)
    }

    /// Temperature sint16 LE × 0.01 °C, humidity uint16 LE × 0.01 %, battery % at `offset`...
    /// The caller has checked `offset + 5 <= v.count`.
    static func littleEndian(_ v: [UInt8], at offset: Int, model: Int) -> DecodedAdvertisement {
        let temperature = Int16(bitPattern: UInt16(v[offset]) | UInt16(v[offset + 1]) << 8)
        let humidity = UInt16(v[offset + 2]) | UInt16(v[offset + 3]) << 8
        var values = JSONObject()
        values.append("temperature", .number(Double(temperature) / 100))
        values.append("humidity", .number(Double(humidity) / 100))
        values.append("battery", .integer(Int64(v[offset + 4])))
        return result(values, model: model)
    }

    /// The H5055 (20 bytes): battery at 2 (bit 7 a flag), at 3 the probe pair (bits 6–7: probes
    /// 1–2, 3–4, 5–6) and which of the two are plugged in (bits 0–5, one per probe), the pair's
    /// temperatures in whole °C (sint16 LE) at 5 and 12.
    static func h5055(_ v: [UInt8]) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        let ids = v[3]
        let first: Int
        switch ids & 0xC0 {
        case 0x00: first = 1
        case 0x40: first = 3
        case 0x80: first = 5
        default: return .failure(.malformed(family: name, reason: "H5055 probe group 3"))
        }
        var values = JSONObject()
        values.append("battery", .integer(Int64(v[2] & 0x7F)))
        for slot in 0..<2 {
            let probe = first + slot
            let offset = slot == 0 ? 5 : 12
            guard ids & (1 << UInt8(probe - 1)) != 0 else { continue }
            let t = Int16(bitPattern: UInt16(v[offset]) | UInt16(v[offset + 1]) << 8)
            values.append(probeName(probe), .number(Double(t)))
        }
        return .success(result(values, model: 5055))
    }

    /// The models of the 6-byte `0x0001` frame.
    static func isPackedModel0001(_ code: Int) -> Bool {
        switch code {
        case 5100, 5101, 5102, 5103, 5104, 5105, 5110, 5174, 5177, 5179: return true
        default: return false
        }
    }

    static func probeName(_ probe: Int) -> String {
        switch probe {
        case 1: return "temperature_probe_1"
        case 2: return "temperature_probe_2"
        case 3: return "temperature_probe_3"
        case 4: return "temperature_probe_4"
        case 5: return "temperature_probe_5"
        default: return "temperature_probe_6"
        }
    }

    static func result(_ values: JSONObject, model: Int?) -> DecodedAdvertisement {
        DecodedAdvertisement(decoder: name, values: values, manufacturer: "Govee", model: model.map { "H\($0)" })
    }

    /// The Govee model number in an advertised name: four digits starting with 5 after `H` or
    /// `GV` (`GVH5075_2762` → 5075, `Govee_H5179_3CD5` → 5179, `GV5179_6319` → 5179).
    static func modelCode(_ name: String?) -> Int? {
        guard let name else { return nil }
        var p2: UInt8 = 0  // the byte two before
        var p1: UInt8 = 0  // the byte before
        var digits = 0
        var code = 0
        var prefixOK = false
        for byte in name.utf8 {
            if digits > 0 {
                if byte >= 0x30, byte <= 0x39 {
                    code = code * 10 + Int(byte - 0x30)
                    digits += 1
                    if digits == 4 { return code }
                    continue
                }
                digits = 0
            }
            if byte == 0x35, digits == 0 {  // '5'
                prefixOK = p1 == 0x48 || (p2 == 0x47 && p1 == 0x56)  // "H5" or "GV5"
                if prefixOK {
                    digits = 1
                    code = 5
                }
            }
            p2 = p1
            p1 = byte
        }
        return nil
    }
}
