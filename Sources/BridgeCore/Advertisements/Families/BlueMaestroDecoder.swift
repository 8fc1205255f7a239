/// BlueMaestro Tempo Disc (SPEC §13, decoder `bluemaestro`): manufacturer data `0x0133`. Byte 0
/// is the version (the model), byte 1 the battery (%), then per version:
///
/// | version | model | layout after byte 1 |
/// |---|---|---|
/// | `0x08` | Temperature Sensor v8 | 4 bytes (logging interval, log count), temperature |
/// | `0x0d` | Tempo Disc T (1-in-1) | the same |
/// | `0x16`, `0x17` | Tempo Disc THD (3-in-1) | 4 bytes, temperature, humidity, dew point |
/// | `0x1b` | Tempo Disc THPD (4-in-1) | 4 bytes, temperature, humidity, pressure |
/// | `0x29` | Tempo Disc Maxi T | 13 bytes, temperature |
/// | `0x2a` | Tempo Disc Maxi THD | 13 bytes, temperature, humidity |
/// | `0x2b` | Tempo Disc Maxi THPD | 13 bytes, temperature, humidity, pressure |
///
/// The Tempo Disc fields are 16-bit big endian in tenths (temperature and dew point signed,
/// humidity and pressure (hPa) unsigned); the Maxi's little endian in hundredths (temperature and
/// humidity int16, pressure int32). The frame must hold at least one byte past the last field
/// (bluemaestro-ble's rule; the advertisement continues with statistics this decoder does not
/// read).
///
/// Values: `battery` (%), `temperature` (°C), `humidity` (%), `dew_point` (°C, only where the
/// frame carries it: the Maxi's is not computed), `pressure` (hPa). No packet counter. A battery
/// above 100 % or a humidity outside 0...100 % is malformed.
public enum BlueMaestroDecoder: AdvertisementFamily {
    /// `bluemaestro`.
    public static let name = "bluemaestro"
    /// BlueMaestro's company id, `0x0133`.
    public static let companyID: UInt16 = 0x0133

    /// Decodes a Tempo Disc frame.
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard let data = frame.manufacturerData[companyID] else { return nil }
        guard let version = data.first else { return .failure(.truncated("BlueMaestro version")) }
        switch version {
        case 0x08: return disc(data, fields: 1, model: "BlueMaestro Temperature Sensor v8")
        case 0x0D: return disc(data, fields: 1, model: "Tempo Disc T")
        case 0x16, 0x17: return disc(data, fields: 3, model: "Tempo Disc THD")
        case 0x1B: return disc(data, fields: 3, pressure: true, model: "Tempo Disc THPD")
        case 0x29: return maxi(data, fields: 1, model: "Tempo Disc Maxi T")
        case 0x2A: return maxi(data, fields: 2, model: "Tempo Disc Maxi THD")
        case 0x2B: return maxi(data, fields: 3, model: "Tempo Disc Maxi THPD")
        default:
            return .failure(.malformed(family: name, reason: "unknown version byte \(version)"))
        }
    }

    static func malformed(_ reason: String) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        .failure(.malformed(family: name, reason: reason))
    }

    static func result(_ values: JSONObject, model: String) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        .success(DecodedAdvertisement(decoder: name, values: values, manufacturer: "BlueMaestro", model: model))
    }

    /// Tempo Disc (big endian, tenths): `fields` 16-bit fields from byte 6, the third being the
    /// dew point or (`pressure`) the pressure.
    static func disc(_ data: [UInt8], fields: Int, pressure: Bool = false, model: String)
        -> Result<DecodedAdvertisement, AdvertisementDecodeError>
    {
        guard data.count >= 8 + 2 * (fields - 1) else { return .failure(.truncated("\(model) readings")) }
        func u16(_ at: Int) -> UInt16 { UInt16(data[at]) << 8 | UInt16(data[at + 1]) }
        guard data[1] <= 100 else { return malformed("battery above 100 %") }
        var values = JSONObject()
        values.append("battery", .integer(Int64(data[1])))
        values.append("temperature", .number(Double(Int16(bitPattern: u16(6))) / 10))
        if fields >= 3 {
            let humidity = u16(8)
            guard humidity <= 1000 else { return malformed("humidity above 100 %") }
            values.append("humidity", .number(Double(humidity) / 10))
            if pressure {
                values.append("pressure", .number(Double(u16(10)) / 10))
            } else {
                values.append("dew_point", .number(Double(Int16(bitPattern: u16(10))) / 10))
            }
        }
        return result(values, model: model)
    }

    /// Tempo Disc Maxi (little endian, hundredths): temperature and humidity int16 from byte 15,
    /// pressure int32 after them.
    static func maxi(_ data: [UInt8], fields: Int, model: String) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        let end = fields == 3 ? 23 : 15 + 2 * fields
        guard data.count >= end else { return .failure(.truncated("\(model) readings")) }
        func s16(_ at: Int) -> Int16 { Int16(bitPattern: UInt16(data[at]) | UInt16(data[at + 1]) << 8) }
        guard data[1] <= 100 else { return malformed("battery above 100 %") }
        var values = JSONObject()
        values.append("battery", .integer(Int64(data[1])))
        values.append("temperature", .number(Double(s16(15)) / 100))
        if fields >= 2 {
            let humidity = s16(17)
            guard (0...10_000).contains(humidity) else { return malformed("humidity outside 0...100 %") }
            values.append("humidity", .number(Double(humidity) / 100))
        }
        if fields >= 3 {
            let raw = UInt32(data[19]) | UInt32(data[20]) << 8 | UInt32(data[21]) << 16 | UInt32(data[22]) << 24
            values.append("pressure", .number(Double(Int32(bitPattern: raw)) / 100))
        }
        return result(values, model: model)
    }
}
