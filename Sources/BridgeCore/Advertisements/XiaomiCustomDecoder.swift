/// The two formats of the custom firmware for Xiaomi thermometers (LYWSD03MMC and relatives) on
/// service data UUID `181a`, told apart by length:
///
/// - `pvvx` (15 bytes, all little endian): MAC (6, reversed), temperature sint16 × 0.01 °C,
///   humidity uint16 × 0.01 %, battery uint16 mV, battery uint8 %, frame counter uint8, flags uint8;
/// - `atc1441` (13 bytes): MAC (6, as written), temperature sint16 *big endian* × 0.1 °C,
///   humidity uint8 %, battery uint8 %, battery uint16 mV *big endian*, frame counter uint8.
///
/// Values: `temperature` (°C), `humidity` (%), `battery` (%), `voltage` (V). The frame counter is
/// the packet id. Other lengths (pvvx's encrypted formats among them) fail with
/// ``AdvertisementDecodeError/unexpectedLength(uuid:length:)``.
public enum XiaomiCustomDecoder {
    /// The service data UUID, `0000181a-0000-1000-8000-00805f9b34fb` (Environmental Sensing).
    public static let serviceUUID = BluetoothUUID(uuid16: 0x181A)

    /// Decodes one frame's `181a` service data.
    public static func decode(serviceData data: [UInt8]) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        switch data.count {
        case 15:
            let temperature = Int16(bitPattern: UInt16(data[6]) | UInt16(data[7]) << 8)
            let humidity = UInt16(data[8]) | UInt16(data[9]) << 8
            let millivolts = UInt16(data[10]) | UInt16(data[11]) << 8
            var values = JSONObject()
            values.append("temperature", .number(Double(temperature) / 100))
            values.append("humidity", .number(Double(humidity) / 100))
            values.append("battery", .integer(Int64(data[12])))
            values.append("voltage", .number(Double(millivolts) / 1000))
            return .success(DecodedAdvertisement(decoder: "pvvx", packetID: Int(data[13]), values: values))
        case 13:
            let temperature = Int16(bitPattern: UInt16(data[6]) << 8 | UInt16(data[7]))
            let millivolts = UInt16(data[10]) << 8 | UInt16(data[11])
            var values = JSONObject()
            values.append("temperature", .number(Double(temperature) / 10))
            values.append("humidity", .integer(Int64(data[8])))
            values.append("battery", .integer(Int64(data[9])))
            values.append("voltage", .number(Double(millivolts) / 1000))
            return .success(DecodedAdvertisement(decoder: "atc1441", packetID: Int(data[12]), values: values))
        default:
            return .failure(.unexpectedLength(uuid: "181a", length: data.count))
        }
    }
}
