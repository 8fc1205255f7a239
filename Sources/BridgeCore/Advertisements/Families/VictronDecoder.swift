/// Victron Energy's Instant Readout (SPEC §13, decoder `victron`): manufacturer data `0x02e1`,
/// encrypted with the device's 16-byte advertisement key (its `bindkey`, from VictronConnect).
///
/// The frame: byte 0 `0x10` (a product advertisement), byte 1 (unused here), the product id
/// (uint16 LE), the record type, the data counter (uint16 LE), the key's first byte (a check:
/// another value means another key, ``AdvertisementDecodeError/badMIC``), then the record,
/// encrypted with AES-128-CTR from the counter block `counter lo, counter hi, 0, ..., 0` (only
/// the first 16 bytes, one block, are read). The record's fields are packed LSB first; a field
/// holding its "not available" value (all ones; the largest positive value for signed fields)
/// is absent.
///
/// | type | model | fields read (bits, scale) |
/// |---|---|---|
/// | `0x01` | Solar Charger | state 8, error 8, battery voltage s16 0.01 V, battery current s16 0.1 A, yield today u16 0.01 kWh, PV power u16 W |
/// | `0x02` | Battery Monitor (SmartShunt, BMV; Smart Battery Sense, product ids a3a4 and a3a5) | remaining u16, voltage s16 0.01 V, alarm u16, aux u16, aux mode 2, current s22 mA, consumed u20, state of charge u10 0.1 % |
/// | `0x04` | DC/DC Converter (Orion Smart) | state 8, error 8, input voltage u16 0.01 V, output voltage s16 0.01 V, off reason 32 |
///
/// Values: `battery_voltage` (V), `battery_current` (A), `state_of_charge` (%), `solar_power` (W),
/// `yield_today` (kWh), `temperature` (°C, a battery monitor's aux input in temperature mode),
/// and for a DC/DC converter `voltage` (V, its input) and `battery_voltage` (V, its output: the
/// battery it charges). `encrypted` is true; the data counter is both the `counter` and the
/// packet id. Other record types are refused as malformed.
///
/// The key check byte tells a wrong key 255 times in 256; Instant Readout has no MIC, so a wrong
/// key with the right first byte decodes to noise.
public enum VictronDecoder: AdvertisementFamily {
    /// `victron`.
    public static let name = "victron"
    /// Victron Energy's company id, `0x02e1`.
    public static let companyID: UInt16 = 0x02E1

    /// The model and the record's length in bytes (what this decoder reads) of a record type.
    static func record(_ type: UInt8) -> (model: String, length: Int)? {
        switch type {
        case 0x01: return ("Solar Charger", 12)
        case 0x02: return ("Battery Monitor", 15)
        case 0x04: return ("DC/DC Converter", 10)
        default: return nil
        }
    }

    /// Decodes an Instant Readout frame with the device's key.
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard let data = frame.manufacturerData[companyID] else { return nil }
        guard data.count >= 8 else { return .failure(.truncated("Victron Instant Readout header")) }
        guard data[0] == 0x10 else {
            return .failure(.malformed(family: name, reason: "record 0x\(Hex.encode([data[0]])) is not a product advertisement (0x10)"))
        }
        guard let (recordModel, length) = record(data[4]) else {
            return .failure(.malformed(family: name, reason: "record type 0x\(Hex.encode([data[4]])) is not supported"))
        }
        let product = UInt16(data[2]) | UInt16(data[3]) << 8
        let model = data[4] == 0x02 && (product == 0xA3A4 || product == 0xA3A5) ? "Smart Battery Sense" : recordModel
        guard let key else { return .failure(.encryptedWithoutKey) }
        guard key.count == 16 else { return .failure(.invalidKey(key.count)) }
        guard data[7] == key[0] else { return .failure(.badMIC) }
        guard data.count >= 8 + length else { return .failure(.truncated("\(model) record")) }
        let counter = UInt16(data[5]) | UInt16(data[6]) << 8
        let values: JSONObject? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 32) { buffer in
            for index in 0..<16 { buffer[index] = 0 }
            buffer[0] = data[5]
            buffer[1] = data[6]
            let block = UnsafeBufferPointer(rebasing: buffer[0..<16])
            let plain = UnsafeMutableBufferPointer(rebasing: buffer[16..<(16 + length)])
            let ok = key.withUnsafeBufferPointer { key in
                data.withUnsafeBufferPointer { data in
                    AESCTR.apply(
                        key: key, counterBlock: block, input: UnsafeBufferPointer(rebasing: data[8..<(8 + length)]), output: plain)
                }
            }
            guard ok else { return nil }
            return readings(data[4], UnsafeBufferPointer(plain))
        }
        guard let values else { return .failure(.malformed(family: name, reason: "decryption failed")) }
        return .success(
            DecodedAdvertisement(
                decoder: name, packetID: Int(counter), values: values, encrypted: true, counter: UInt32(counter),
                manufacturer: "Victron Energy", model: model))
    }

    /// `count` bits from bit `start` of `p`, LSB first (as Victron packs its records).
    static func bits(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> UInt64 {
        let first = start >> 3
        let bytes = ((start & 7) + count + 7) >> 3
        var value: UInt64 = 0
        for index in 0..<bytes where first + index < p.count {
            value |= UInt64(p[first + index]) << UInt64(8 * index)
        }
        return (value >> UInt64(start & 7)) & ((1 << UInt64(count)) - 1)
    }

    /// A signed field of `count` bits, nil when it holds the "not available" value (the largest positive).
    static func signed(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int64? {
        let raw = bits(p, start, count)
        let half: UInt64 = 1 << UInt64(count - 1)
        guard raw != half - 1 else { return nil }
        return raw >= half ? Int64(raw) - Int64(half << 1) : Int64(raw)
    }

    /// An unsigned field of `count` bits, nil when all ones ("not available").
    static func unsigned(_ p: UnsafeBufferPointer<UInt8>, _ start: Int, _ count: Int) -> Int64? {
        let raw = bits(p, start, count)
        return raw == (1 << UInt64(count)) - 1 ? nil : Int64(raw)
    }

    static func readings(_ type: UInt8, _ p: UnsafeBufferPointer<UInt8>) -> JSONObject {
        var values = JSONObject()
        switch type {
        case 0x01:
            if let volts = signed(p, 16, 16) { values.append("battery_voltage", .number(Double(volts) / 100)) }
            if let amps = signed(p, 32, 16) { values.append("battery_current", .number(Double(amps) / 10)) }
            if let yield = unsigned(p, 48, 16) { values.append("yield_today", .number(Double(yield) / 100)) }
            if let watts = unsigned(p, 64, 16) { values.append("solar_power", .integer(watts)) }
        case 0x02:
            if let volts = signed(p, 16, 16) { values.append("battery_voltage", .number(Double(volts) / 100)) }
            if let amps = signed(p, 66, 22) { values.append("battery_current", .number(Double(amps) / 1000)) }
            if let soc = unsigned(p, 108, 10) { values.append("state_of_charge", .number(Double(soc) / 10)) }
            if bits(p, 64, 2) == 2, let kelvin = unsigned(p, 48, 16) {
                values.append("temperature", .number(Double(kelvin - 27_315) / 100))
            }
        default:  // 0x04
            if let volts = unsigned(p, 16, 16) { values.append("voltage", .number(Double(volts) / 100)) }
            if let volts = signed(p, 32, 16) { values.append("battery_voltage", .number(Double(volts) / 100)) }
        }
        return values
    }
}
