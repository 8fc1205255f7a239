/// ThermoPro thermo-hygrometers TP357, TP358, TP359, TP393 (and their `S` variants) (SPEC §13).
///
/// The advertisement is one manufacturer-data AD structure whose first two bytes, which BlueZ takes
/// as the company id, are data: with `d` the whole structure (id little endian, then the value),
/// `d[0]` a type byte (`0xC2`), `d[1…2]` the temperature (sint16 LE × 0.1 °C), `d[3]` the humidity
/// (whole %), `d[4]` bits 0–1 the battery level (0 low, 1 half, 2 full; 3 not given), published as
/// `battery` 1, 50 and 100 % as Home Assistant's thermopro-ble does. `ff ff ff` in `d[1…3]` means
/// no reading (only the battery is published; with battery level 3 too, the frame carries
/// nothing: `.failure`).
///
/// Nothing in the bytes is ThermoPro's: the frame is claimed only with an advertised name starting
/// `TP35` or `TP39` (the model is the name's first word), and only when it has a single
/// manufacturer-data entry (see ``ByteFamilySupport/soleEntry(_:)``); without a name, nil.
public enum ThermoProDecoder: AdvertisementFamily {
    /// The decoder name in payloads.
    public static let name = "thermopro"

    /// Decodes a ThermoPro frame; nil for a frame that is not one (or cannot be told to be one).
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard claimsName(frame.name), let (id, v) = ByteFamilySupport.soleEntry(frame)
        else { return nil }
        guard v.count >= 4 else {
            return .failure(.malformed(family: name, reason: "\(v.count + 2) bytes of manufacturer data (at least 6)"))
        }
        let d1 = UInt8(truncatingIfNeeded: id >> 8)
        var values = JSONObject()
        if !(d1 == 0xFF && v[0] == 0xFF && v[1] == 0xFF) {
            let temperature = Int16(bitPattern: UInt16(d1) | UInt16(v[0]) << 8)
            values.append("temperature", .number(Double(temperature) / 10))
            values.append("humidity", .integer(Int64(v[1])))
        }
        switch v[2] & 0x03 {
        case 0: values.append("battery", .integer(1))
        case 1: values.append("battery", .integer(50))
        case 2: values.append("battery", .integer(100))
        default: break
        }
        if values.isEmpty { return .failure(.malformed(family: name, reason: "no reading and no battery level")) }
        return .success(DecodedAdvertisement(decoder: name, values: values, manufacturer: "ThermoPro", model: model(frame.name)))
    }

    /// Whether the advertised name is a ThermoPro thermo-hygrometer's (`TP35…`, `TP39…`).
    static func claimsName(_ name: String?) -> Bool {
        ByteFamilySupport.name(name, hasPrefix: "TP35") || ByteFamilySupport.name(name, hasPrefix: "TP39")
    }

    /// The advertised name's first word (`"TP357S (2142)"` → `"TP357S"`).
    static func model(_ name: String?) -> String? {
        guard let name else { return nil }
        return String(name.prefix { $0 != " " })
    }
}
