/// SensorPush HT1, HT.w, HTP.xw and TC.x (SPEC §13), in one manufacturer-data AD structure whose
/// first two bytes (BlueZ's "company id") are data. With `d` the whole structure (id little
/// endian, then the value):
///
/// - HT1 (name `s`, service UUID `ef090000-11d6-42ba-93b8-9dd7ec090aa9`), 4 bytes: humidity
///   raw `d[0] | (d[1] & 0x0f) << 8` (−6 + 125·raw/2¹² %, clamped to 0…100), temperature raw
///   `d[1] >> 4 | d[2] << 4 | (d[3] & 3) << 12` (−46.85 + 175.72·raw/2¹⁴ °C), device type
///   `(d[3] >> 2) & 0x1f` = 1;
/// - the later models (name `SensorPush …` or service UUID `ef090000-…-9dd7ec090ab0`): `d[0]`
///   bits 0–1 the page (0 carries the readings), bits 2–7 the device type − 64 (64 HTP.xw,
///   65 HT.w, 66 TC.x); `d[1…]` a little-endian number packing, lowest first, the count of
///   steps of each quantity above its minimum: HT.w temperature −40…125 °C and humidity 0…100 %
///   in 0.0025 steps; HTP.xw the same to 140 °C plus pressure 30000…125000 Pa (published in hPa);
///   TC.x temperature −200…1800 °C in 0.0625 steps. Values are published at the format's own
///   resolution, each the decimal the frame carries (20.5325 °C, as TheengsDecoder reads it;
///   computed as one division of whole numbers, so the double is that decimal's nearest), as
///   Ruuvi's and Mopeka's are; sensorpush-ble rounds them to 0.01 for display.
///
/// The HT1's values come out of Sensirion's conversion formulas (steps of 0.0107 °C and
/// 0.0305 %, no exact decimal): rounded to 0.01 as sensorpush-ble rounds them.
///
/// Only a frame with a single manufacturer-data entry is read (see
/// ``ByteFamilySupport/soleEntry(_:)``); a later-model frame of another page, an unknown device
/// type or a length other than the model's (7 bytes in all for the HTP.xw, 5 for the HT.w, 4 or
/// 5 for the TC.x) is a `.failure`.
public enum SensorPushDecoder: AdvertisementFamily {
    /// The decoder name in payloads.
    public static let name = "sensorpush"
    /// The HT1's service UUID.
    public static let ht1UUID = BluetoothUUID("ef090000-11d6-42ba-93b8-9dd7ec090aa9")!
    /// The later models' service UUID.
    public static let v2UUID = BluetoothUUID("ef090000-11d6-42ba-93b8-9dd7ec090ab0")!

    /// Decodes a SensorPush frame; nil for a frame that is not one (or cannot be told to be one).
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        if ByteFamilySupport.name(frame.name, equalsIgnoringCase: "s"), frame.serviceUUIDs.contains(ht1UUID) {
            guard let (id, v) = ByteFamilySupport.soleEntry(frame) else { return nil }
            return ht1(id: id, v)
        }
        guard ByteFamilySupport.name(frame.name, hasPrefix: "SensorPush ") || frame.serviceUUIDs.contains(v2UUID),
            let (id, v) = ByteFamilySupport.soleEntry(frame)
        else { return nil }
        let d0 = UInt8(truncatingIfNeeded: id)
        guard d0 & 0x03 == 0 else { return .failure(.malformed(family: name, reason: "page \(d0 & 0x03) carries no readings")) }
        let type = 64 + Int(d0 >> 2)
        let blocks: Int
        let lengthOK: Bool
        switch type {
        case 64: blocks = 3; lengthOK = v.count == 5
        case 65: blocks = 2; lengthOK = v.count == 3
        case 66: blocks = 1; lengthOK = v.count == 2 || v.count == 3
        default: return .failure(.malformed(family: name, reason: "unknown device type \(type)"))
        }
        // The packed number: d[1] (the id's high byte), then the value, little endian; its
        // length is the model's (HTP.xw 7 bytes in all, HT.w 5, TC.x 4 or 5).
        guard lengthOK else {
            return .failure(.malformed(family: name, reason: "\(v.count + 2) bytes of manufacturer data for device type \(type)"))
        }
        var packed = UInt64(id >> 8)
        for i in 0..<v.count { packed |= UInt64(v[i]) << UInt64(8 * (i + 1)) }
        var values = JSONObject()
        var rest = packed
        for block in 0..<blocks {
            let (offset, divisor, steps) = parameters(type: type, block: block)
            let count = rest % steps
            rest /= steps
            let value = Double(Int64(count) + offset) / divisor
            switch (type, block) {
            case (_, 0): values.append("temperature", .number(value))
            case (_, 1): values.append("humidity", .number(value))
            default: values.append("pressure", .number(value))
            }
        }
        let model = type == 64 ? "HTP.xw" : type == 65 ? "HT.w" : "TC.x"
        return .success(DecodedAdvertisement(decoder: name, values: values, manufacturer: "SensorPush", model: model))
    }

    /// Whether the advertised name is a SensorPush's (`SensorPush …`, or the HT1's `s`).
    static func claimsName(_ name: String?) -> Bool {
        ByteFamilySupport.name(name, hasPrefix: "SensorPush ") || ByteFamilySupport.name(name, equalsIgnoringCase: "s")
    }

    /// Each packed quantity as `(count + offset) / divisor` in its published unit, and its number
    /// of steps (+1): temperature −40 °C + count × 0.0025 (TC.x −200 °C + count × 0.0625),
    /// humidity count × 0.0025 %, pressure 30000 Pa + count Pa, published in hPa.
    static func parameters(type: Int, block: Int) -> (offset: Int64, divisor: Double, steps: UInt64) {
        switch (type, block) {
        case (64, 0): return (-16_000, 400, 72_001)
        case (65, 0): return (-16_000, 400, 66_001)
        case (66, 0): return (-3_200, 16, 32_001)
        case (_, 1): return (0, 400, 40_001)
        default: return (30_000, 100, 95_001)
        }
    }

    static func ht1(id: UInt16, _ v: [UInt8]) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        guard v.count == 2 else {
            return .failure(.malformed(family: name, reason: "HT1 frame of \(v.count + 2) bytes (4)"))
        }
        let d0 = UInt16(id & 0xFF), d1 = UInt16(id >> 8), d2 = UInt16(v[0]), d3 = UInt16(v[1])
        guard (d3 & 124) >> 2 == 1 else {
            return .failure(.malformed(family: name, reason: "HT1 device type \((d3 & 124) >> 2)"))
        }
        let rawHumidity = d0 | (d1 & 0x0F) << 8
        let rawTemperature = d1 >> 4 | d2 << 4 | (d3 & 3) << 12
        var humidity = -6.0 + 125.0 * (Double(rawHumidity) / 4096.0)
        humidity = humidity < 0 ? 0 : humidity > 100 ? 100 : humidity
        let temperature = -46.85 + 175.72 * (Double(rawTemperature) / 16384.0)
        var values = JSONObject()
        values.append("temperature", .number(ByteFamilySupport.round2(temperature)))
        values.append("humidity", .number(ByteFamilySupport.round2(humidity)))
        return .success(DecodedAdvertisement(decoder: name, values: values, manufacturer: "SensorPush", model: "HT1"))
    }
}
