/// Inkbird thermometers (SPEC §13), told by the advertised name, in one manufacturer-data AD
/// structure whose first two bytes (BlueZ's "company id") are data. With `d` the whole structure
/// (id little endian, then the value):
///
/// - `sps` (IBS-TH, IBS-TH2 with humidity) and `tps` (IBS-TH2 / P01B, temperature only), 9 bytes:
///   temperature sint16 LE × 0.01 °C at `d[0]`, humidity uint16 LE × 0.01 % at `d[2]` (a `tps`
///   reports it only when it is neither 0 nor `ffff`: no humidity sensor fitted), battery % at `d[7]`;
/// - `ITH-11-B`, `ITH-13-B`, `ITH-21-B`, `IBS-P02B`, 18 bytes: temperature sint16 LE × 0.1 °C at
///   `d[6]`, humidity uint16 LE × 0.1 % at `d[8]` (0: none), battery % at `d[10]`;
/// - `iBBQ` / `xBBQ` (IBT-2X, IBT-4XS, IBT-6XS), 12, 14, 18 or 22 bytes for 1, 2, 4 or 6 probes:
///   each probe sint16 LE × 0.1 °C from `d[10]` on, `ffff` for a probe not plugged in (absent).
///
/// A humidity above 100 % or a battery above 100 % is a corrupt frame (`.failure`). Only a frame
/// with a single manufacturer-data entry is read (see ``ByteFamilySupport/soleEntry(_:)``);
/// without the name, nil: the bytes alone do not tell an Inkbird.
public enum InkbirdDecoder: AdvertisementFamily {
    /// The decoder name in payloads.
    public static let name = "inkbird"

    /// Decodes an Inkbird frame; nil for a frame that is not one (or cannot be told to be one).
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard let label = frame.name, !label.isEmpty else { return nil }
        let sps = ByteFamilySupport.name(label, equalsIgnoringCase: "sps")
        let tps = !sps && ByteFamilySupport.name(label, equalsIgnoringCase: "tps")
        if sps || tps {
            guard let (id, v) = ByteFamilySupport.soleEntry(frame), v.count == 7 else { return nil }
            let temperature = Int16(bitPattern: id)
            let humidity = UInt16(v[0]) | UInt16(v[1]) << 8
            let withHumidity = sps || (humidity != 0 && humidity != 0xFFFF)
            if withHumidity, humidity > 10_000 { return .failure(.malformed(family: name, reason: "humidity above 100 %")) }
            if v[5] > 100 { return .failure(.malformed(family: name, reason: "battery above 100 %")) }
            var values = JSONObject()
            values.append("temperature", .number(Double(temperature) / 100))
            if withHumidity { values.append("humidity", .number(Double(humidity) / 100)) }
            values.append("battery", .integer(Int64(v[5])))
            return .success(result(values, model: sps ? "IBS-TH" : "IBS-TH2/P01B"))
        }
        if let model = eighteenByteModel(label) {
            guard let (_, v) = ByteFamilySupport.soleEntry(frame), v.count == 16 else { return nil }
            let temperature = Int16(bitPattern: UInt16(v[4]) | UInt16(v[5]) << 8)
            let humidity = UInt16(v[6]) | UInt16(v[7]) << 8
            if humidity > 1000 { return .failure(.malformed(family: name, reason: "humidity above 100 %")) }
            if v[8] > 100 { return .failure(.malformed(family: name, reason: "battery above 100 %")) }
            var values = JSONObject()
            values.append("temperature", .number(Double(temperature) / 10))
            if humidity != 0 { values.append("humidity", .number(Double(humidity) / 10)) }
            values.append("battery", .integer(Int64(v[8])))
            return .success(result(values, model: model))
        }
        let ibbq = ByteFamilySupport.name(label, containsIgnoringCase: "ibbq")
        if ibbq || ByteFamilySupport.name(label, containsIgnoringCase: "xbbq") {
            guard let (_, v) = ByteFamilySupport.soleEntry(frame) else { return nil }
            let probes: Int
            switch v.count {
            case 10: probes = 1
            case 12: probes = 2
            case 16: probes = 4
            case 20: probes = 6
            default: return nil
            }
            var values = JSONObject()
            for probe in 0..<probes {
                let raw = UInt16(v[8 + 2 * probe]) | UInt16(v[9 + 2 * probe]) << 8
                guard raw != 0xFFFF else { continue }
                values.append(probeName(probe + 1), .number(Double(Int16(bitPattern: raw)) / 10))
            }
            return .success(result(values, model: bbqModel(x: !ibbq, probes: probes)))
        }
        return nil
    }

    /// Whether the advertised name is one this family reads (`sps`, `tps`, `ITH-…`, `…BBQ…`).
    static func claimsName(_ name: String?) -> Bool {
        guard let name else { return false }
        return ByteFamilySupport.name(name, equalsIgnoringCase: "sps") || ByteFamilySupport.name(name, equalsIgnoringCase: "tps")
            || eighteenByteModel(name) != nil || ByteFamilySupport.name(name, containsIgnoringCase: "ibbq")
            || ByteFamilySupport.name(name, containsIgnoringCase: "xbbq")
    }

    static func eighteenByteModel(_ label: String) -> String? {
        if ByteFamilySupport.name(label, equalsIgnoringCase: "ith-11-b") { return "ITH-11-B" }
        if ByteFamilySupport.name(label, equalsIgnoringCase: "ith-13-b") { return "ITH-13-B" }
        if ByteFamilySupport.name(label, equalsIgnoringCase: "ith-21-b") { return "ITH-21-B" }
        if ByteFamilySupport.name(label, equalsIgnoringCase: "ibs-p02b") { return "IBS-P02B" }
        return nil
    }

    static func bbqModel(x: Bool, probes: Int) -> String {
        switch (x, probes) {
        case (false, 1): return "iBBQ-1"
        case (false, 2): return "iBBQ-2"
        case (false, 4): return "iBBQ-4"
        case (false, _): return "iBBQ-6"
        case (true, 1): return "xBBQ-1"
        case (true, 2): return "xBBQ-2"
        case (true, 4): return "xBBQ-4"
        case (true, _): return "xBBQ-6"
        }
    }

    static func probeName(_ probe: Int) -> String { GoveeDecoder.probeName(probe) }

    static func result(_ values: JSONObject, model: String) -> DecodedAdvertisement {
        DecodedAdvertisement(decoder: name, values: values, manufacturer: "Inkbird", model: model)
    }
}
