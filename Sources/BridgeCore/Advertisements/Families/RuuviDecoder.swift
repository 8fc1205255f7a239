/// RuuviTag (SPEC §13, decoder `ruuvi`): manufacturer data `0x0499` (Ruuvi Innovations), byte 0
/// the data format; all fields big endian.
///
/// - Format 3, RAWv1 (14 bytes): humidity uint8 × 0.5 % (above 200, i.e. 100 %, absent: Ruuvi's
///   own "maximum values" example carries 255, not a humidity); temperature as a sign bit and
///   7 bits of whole °C, then uint8 hundredths (0...99, more is malformed); pressure uint16 + 50 000 Pa;
///   acceleration x, y, z int16 mG; battery uint16 mV.
/// - Format 5, RAWv2 (24 bytes): temperature int16 × 0.005 °C; humidity uint16 × 0.0025 %;
///   pressure uint16 + 50 000 Pa; acceleration x, y, z int16 mG; 11 bits battery + 1600 mV and
///   5 bits transmit power; movement counter uint8; measurement sequence uint16; the MAC. Each
///   field's "not available" value (int16 −32768, uint16 65535, 2047 mV, 255 movements) makes
///   that value absent (the acceleration: all three axes when any is not available).
///
/// Values: `temperature` (°C), `humidity` (%), `pressure` (hPa), `acceleration_x/_y/_z` (m/s²,
/// g = 9.80665 m/s²), `voltage` (V), `movement_counter`. Format 5's measurement sequence is the
/// packet id. Other data formats (6 and E1, Ruuvi Air) are refused as malformed.
public enum RuuviDecoder: AdvertisementFamily {
    /// `ruuvi`.
    public static let name = "ruuvi"
    /// Ruuvi Innovations' company id, `0x0499`.
    public static let companyID: UInt16 = 0x0499

    /// Decodes a RuuviTag data format 3 or 5 frame.
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard let data = frame.manufacturerData[companyID] else { return nil }
        guard let format = data.first else { return .failure(.truncated("Ruuvi data format")) }
        switch format {
        case 3: return rawV1(data)
        case 5: return rawV2(data)
        default: return malformed("data format \(format) is not supported (3 and 5 are)")
        }
    }

    static func malformed(_ reason: String) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        .failure(.malformed(family: name, reason: reason))
    }

    static func u16(_ data: [UInt8], _ at: Int) -> UInt16 { UInt16(data[at]) << 8 | UInt16(data[at + 1]) }
    static func s16(_ data: [UInt8], _ at: Int) -> Int16 { Int16(bitPattern: u16(data, at)) }

    /// mG to m/s².
    static func acceleration(_ milliG: Int16) -> JSONValue { .number(Double(milliG) * 9.80665 / 1000) }

    /// The three axes, none when any is −32768 (not available: an axis that failed makes the
    /// vector meaningless; ruuvitag-ble drops all three too).
    static func appendAcceleration(_ data: [UInt8], at: Int, to values: inout JSONObject) {
        let x = s16(data, at), y = s16(data, at + 2), z = s16(data, at + 4)
        guard x != Int16.min, y != Int16.min, z != Int16.min else { return }
        values.append("acceleration_x", acceleration(x))
        values.append("acceleration_y", acceleration(y))
        values.append("acceleration_z", acceleration(z))
    }

    static func rawV1(_ data: [UInt8]) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        guard data.count == 14 else { return malformed("data format 3 has 14 bytes, not \(data.count)") }
        guard data[3] <= 99 else { return malformed("hundredths of a degree above 99") }
        let magnitude = Double(Int(data[2] & 0x7F) * 100 + Int(data[3])) / 100
        var values = JSONObject()
        values.append("temperature", .number(data[2] & 0x80 != 0 ? -magnitude : magnitude))
        if data[1] <= 200 { values.append("humidity", .number(Double(data[1]) / 2)) }
        values.append("pressure", .number(Double(Int(u16(data, 4)) + 50_000) / 100))
        appendAcceleration(data, at: 6, to: &values)
        values.append("voltage", .number(Double(u16(data, 12)) / 1000))
        return .success(DecodedAdvertisement(decoder: name, values: values, manufacturer: "Ruuvi Innovations Ltd.", model: "RuuviTag"))
    }

    static func rawV2(_ data: [UInt8]) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        guard data.count == 24 else { return malformed("data format 5 has 24 bytes, not \(data.count)") }
        var values = JSONObject()
        let temperature = s16(data, 1)
        if temperature != Int16.min { values.append("temperature", .number(Double(temperature) / 200)) }
        let humidity = u16(data, 3)
        if humidity != 0xFFFF { values.append("humidity", .number(Double(humidity) / 400)) }
        let pressure = u16(data, 5)
        if pressure != 0xFFFF { values.append("pressure", .number(Double(Int(pressure) + 50_000) / 100)) }
        appendAcceleration(data, at: 7, to: &values)
        let millivolts = u16(data, 13) >> 5
        if millivolts != 0x7FF { values.append("voltage", .number(Double(Int(millivolts) + 1600) / 1000)) }
        if data[15] != 0xFF { values.append("movement_counter", .integer(Int64(data[15]))) }
        let sequence = u16(data, 16)
        return .success(
            DecodedAdvertisement(
                decoder: name, packetID: sequence == 0xFFFF ? nil : Int(sequence), values: values,
                manufacturer: "Ruuvi Innovations Ltd.", model: "RuuviTag"))
    }
}
