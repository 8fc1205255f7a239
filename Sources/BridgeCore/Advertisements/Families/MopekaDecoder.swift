/// Mopeka tank sensors (SPEC §13, decoder `mopeka`): manufacturer data `0x0059` *and* the
/// service UUID `fee5` advertised (`0x0059` is Nordic Semiconductor's company id, which many
/// devices use: without `fee5` the frame is not Mopeka's and is not claimed).
///
/// Ten bytes: hardware id (the model), battery (× 1/32 V), temperature (bits 0...6, + −40 °C;
/// bit 7 the button), tank level (14 bits, little endian, bytes 3-4) with the reading quality in
/// the top two bits of byte 4 (0...3), three bytes of the MAC, and the accelerometer's x and y
/// bytes (raw positions without a unit: not published).
///
/// Values: `temperature` (°C), `tank_level` (mm of propane: the raw level times
/// 0.573045 − 0.002822 t − 0.00000535 t², t the raw temperature byte, truncated to whole mm, as
/// Mopeka and mopeka-iot-ble convert it), `battery` (%: (V − 2.2) / 0.65 × 100, clamped to
/// 0...100, unrounded as TheengsDecoder gives it; mopeka-iot-ble rounds to one decimal) and
/// `voltage` (V). A reading of quality 0 gives no `tank_level` (the sensor
/// found no echo; mopeka-iot-ble also drops it), qualities 1...3 give it. No packet counter.
public enum MopekaDecoder: AdvertisementFamily {
    /// `mopeka`.
    public static let name = "mopeka"
    /// Nordic Semiconductor's company id, `0x0059`, which Mopeka's sensors use.
    public static let companyID: UInt16 = 0x0059
    /// The service UUID Mopeka's sensors advertise, `fee5`.
    public static let serviceUUID = BluetoothUUID(uuid16: 0xFEE5)

    /// The model of a hardware id, nil for an unknown one.
    static func model(_ id: UInt8) -> String? {
        switch id {
        case 0x03: return "Pro Check"
        case 0x04: return "Pro-200"
        case 0x05: return "Pro Check H2O"
        case 0x06: return "Lippert BottleCheck"
        case 0x08: return "Pro Plus"
        case 0x09: return "Pro Plus with Cellular"
        case 0x0A: return "TD40/TD200"
        case 0x0B: return "TD40/TD200 with Cellular"
        case 0x0C: return "Pro Check Universal"
        case 0x12: return "Pro-200B"
        default: return nil
        }
    }

    /// Decodes a Mopeka frame.
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard let data = frame.manufacturerData[companyID], frame.serviceUUIDs.contains(serviceUUID) else { return nil }
        guard data.count == 10 else {
            return .failure(.malformed(family: name, reason: "\(data.count) bytes (a Mopeka frame has 10)"))
        }
        guard let model = model(data[0]) else {
            return .failure(.malformed(family: name, reason: "unknown hardware id \(data[0])"))
        }
        let volts = Double(data[1]) / 32
        let battery = min(100, max(0, (volts - 2.2) / 0.65 * 100))
        let rawTemperature = Int(data[2] & 0x7F)
        let level = Int(data[3]) | Int(data[4] & 0x3F) << 8
        let quality = data[4] >> 6
        var values = JSONObject()
        values.append("temperature", .integer(Int64(rawTemperature - 40)))
        if quality > 0 {
            let t = Double(rawTemperature)
            let millimetres = Double(level) * (0.573045 - 0.002822 * t - 0.000_005_35 * (t * t))
            values.append("tank_level", .integer(Int64(millimetres)))
        }
        values.append("battery", .number(battery))
        values.append("voltage", .number(volts))
        return .success(DecodedAdvertisement(decoder: name, values: values, manufacturer: "Mopeka", model: model))
    }
}
