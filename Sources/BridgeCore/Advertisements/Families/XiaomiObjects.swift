/// The MiBeacon objects the `xiaomi` family reads (the table is in ``XiaomiDecoder``): id
/// (uint16 LE), length (uint8), value. Objects of other ids are skipped by their length.
enum XiaomiObjects {
    typealias Failure = AdvertisementDecodeError

    static func malformed(_ reason: String) -> Result<JSONObject, Failure> {
        .failure(.malformed(family: XiaomiDecoder.name, reason: reason))
    }

    /// The values of the objects in `bytes[start..<end]`, in frame order (a repeated name gets
    /// `_2`, `_3`, ...).
    static func read(_ bytes: [UInt8], from start: Int, to end: Int, model: String) -> Result<JSONObject, Failure> {
        var values = JSONObject()
        var i = start
        // Fewer than 3 bytes left are no object: some devices (MMC-W505) end their frames with one.
        while end - i >= 3 {
            let id = UInt16(bytes[i]) | UInt16(bytes[i + 1]) << 8
            let length = Int(bytes[i + 2])
            let at = i + 3
            guard end - at >= length else { return .failure(.truncated("MiBeacon object 0x\(Hex.encode([bytes[i + 1], bytes[i]]))")) }
            i = at + length
            func need(_ n: Int) -> Bool { length == n }
            func u16(_ o: Int) -> UInt16 { UInt16(bytes[at + o]) | UInt16(bytes[at + o + 1]) << 8 }
            func u24(_ o: Int) -> UInt32 { UInt32(bytes[at + o]) | UInt32(bytes[at + o + 1]) << 8 | UInt32(bytes[at + o + 2]) << 16 }
            func u32(_ o: Int) -> UInt32 { u24(o) | UInt32(bytes[at + o + 3]) << 24 }
            func float(_ digits: Double) -> Double? {
                let value = Double(Float(bitPattern: u32(0)))
                guard value.isFinite else { return nil }
                return (value * digits).rounded() / digits
            }
            func wrongLength() -> Result<JSONObject, Failure> {
                malformed("object 0x\(Hex.encode([bytes[at - 2], bytes[at - 3]])) of \(length) bytes")
            }
            switch id {
            case 0x1004:
                guard need(2) else { return wrongLength() }
                add(&values, "temperature", .number(Double(Int16(bitPattern: u16(0))) / 10))
            case 0x1006:
                guard need(2) else { return wrongLength() }
                add(&values, "humidity", .number(Double(u16(0)) / 10))
            case 0x100D:
                guard need(4) else { return wrongLength() }
                add(&values, "temperature", .number(Double(Int16(bitPattern: u16(0))) / 10))
                add(&values, "humidity", .number(Double(u16(2)) / 10))
            case 0x100A, 0x4803, 0x4C03:
                guard need(1) else { return wrongLength() }
                guard bytes[at] <= 100 else { return malformed("battery \(bytes[at]) % (above 100)") }
                add(&values, "battery", .integer(Int64(bytes[at])))
            case 0x1007:
                guard need(3) else { return wrongLength() }
                if model != "MJYD02YL" && model != "MCCGQ02HL" {
                    add(&values, "illuminance", .integer(Int64(u24(0))))
                }
            case 0x1008:
                guard need(1) else { return wrongLength() }
                guard bytes[at] <= 100 else { return malformed("moisture \(bytes[at]) % (above 100)") }
                add(&values, "moisture", .integer(Int64(bytes[at])))
            case 0x1009:
                guard need(2) else { return wrongLength() }
                add(&values, "conductivity", .integer(Int64(u16(0))))
            case 0x1010:
                guard need(2) else { return wrongLength() }
                add(&values, "formaldehyde", .number(Double(u16(0)) / 100))
            case 0x4801, 0x4C01:
                guard need(4) else { return wrongLength() }
                guard let t = float(id == 0x4801 ? 10 : 100) else { return malformed("temperature is not a number") }
                add(&values, "temperature", .number(t))
            case 0x4802, 0x4C02:
                guard need(1) else { return wrongLength() }
                guard bytes[at] <= 100 else { return malformed("humidity \(bytes[at]) % (above 100)") }
                add(&values, "humidity", .integer(Int64(bytes[at])))
            case 0x4808, 0x4C08:
                guard need(4) else { return wrongLength() }
                guard let h = float(id == 0x4808 ? 10 : 100) else { return malformed("humidity is not a number") }
                add(&values, "humidity", .number(h))
            case 0x000A:
                guard need(2) else { return wrongLength() }
                let t = Int16(bitPattern: u16(0))
                if t != 0 { add(&values, "temperature", .number(Double(t) / 100)) }  // 0: no reading
            case 0x2000:
                // Two raw thermistor readings (body temperature only through an empirical fit,
                // not published) and the battery.
                guard need(5) else { return wrongLength() }
                guard bytes[at + 4] <= 100 else { return malformed("battery \(bytes[at + 4]) % (above 100)") }
                add(&values, "battery", .integer(Int64(bytes[at + 4])))
            case 0x4805:
                guard need(4) else { return wrongLength() }
                guard let lux = float(100), lux >= 0 else { return malformed("illuminance is not a number") }
                add(&values, "illuminance", .number(lux))
            case 0x4A1A:
                guard need(1) else { return wrongLength() }
                if bytes[at] == 1 { add(&values, "opening", .bool(true)) }  // left open
            case 0x1019:
                guard need(1) else { return wrongLength() }
                switch bytes[at] {
                case 0, 2: add(&values, "opening", .bool(true))
                case 1: add(&values, "opening", .bool(false))
                case 3: break  // a reset, not a state
                default: return malformed("door state \(bytes[at])")
                }
            case 0x4804, 0x4A12:
                guard need(1) else { return wrongLength() }
                switch bytes[at] {
                case 1: add(&values, "opening", .bool(true))
                case 2: add(&values, "opening", .bool(false))
                default: break  // other events (a knock, a pry) are no door state
                }
            case 0x000F:
                guard need(3) else { return wrongLength() }
                add(&values, "motion", .bool(true))
                if model == "CGPR1" { add(&values, "illuminance", .integer(Int64(u24(0)))) }
            case 0x1017:
                guard need(4) else { return wrongLength() }
                add(&values, "motion", .bool(u32(0) <= 30))
            case 0x4818:
                guard need(2) else { return wrongLength() }
                add(&values, "motion", .bool(u16(0) <= 30))
            case 0x4A08:
                guard need(4) else { return wrongLength() }
                guard let lux = float(100), lux >= 0 else { return malformed("illuminance is not a number") }
                add(&values, "motion", .bool(true))
                add(&values, "illuminance", .number(lux))
            case 0x101B:
                add(&values, "motion", .bool(false))
            case 0x4A01, 0x4E01:
                guard need(1) else { return wrongLength() }
                add(&values, "battery_low", .bool(bytes[at] != 0))
            default:
                break
            }
        }
        return .success(values)
    }

    /// Appends `name`, or `name_2`, `name_3`, ... when the frame already had it.
    static func add(_ values: inout JSONObject, _ name: String, _ value: JSONValue) {
        guard values[name] != nil else {
            values.append(name, value)
            return
        }
        var n = 2
        while values["\(name)_\(n)"] != nil { n += 1 }
        values.append("\(name)_\(n)", value)
    }
}
