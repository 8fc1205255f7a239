/// SwitchBot's sensors (SPEC §13, decoder `switchbot`): service data `fd3d` (older firmware:
/// `0d00`) and, on newer firmware, manufacturer data `0x0969` (Woan Technology) carrying the MAC
/// and then the readings.
///
/// Service data: byte 0 is the device type (bits 0...6, an ASCII letter; bit 7 is a flag the
/// sensors' values do not depend on), byte 1 status bits, byte 2 bits 0...6 the battery (%).
/// Then, per type:
///
/// - Meter (`T`/`t`), Meter Plus (`i`/`I`), Outdoor Meter (`w`/`W`): three bytes of
///   temperature and humidity, in service data bytes 3...5 or (preferred when present, newer
///   firmware) manufacturer data bytes 8...10: byte 0 bits 0...3 the tenths of °C (0...9),
///   byte 1 bit 7 the sign (1 = positive) and bits 0...6 the whole °C, byte 2 bit 7 the
///   display unit (ignored) and bits 0...6 the humidity (%, 0...100). All three bytes zero means
///   no reading yet (rejected, as PySwitchbot does).
/// - Contact Sensor (`d`/`D`): from manufacturer data byte 7 when it has ≥ 13 bytes (bit 7
///   motion, bit 6 light, bit 5 "left open" timeout, bit 4 open), else from service data of
///   ≥ 9 bytes (byte 1 bit 6 motion; byte 3 bit 0 light, bits 1-2 the door: open or left open).
/// - Motion Sensor (`s`/`S`): service data of ≥ 6 bytes (byte 1 bit 6 motion, byte 5 bit 1
///   light) and, when manufacturer data has ≥ 8 bytes, its byte 7 (bit 6 motion, bit 5 light)
///   instead.
///
/// Values: `temperature` (°C), `humidity` (%), `opening`, `motion` and `light` (booleans; `light`
/// is the sensors' dark/bright bit, BTHome's binary `light`), `battery` (%). No packet counter.
///
/// The device type is only in the service data: manufacturer data alone (before BlueZ has seen
/// the scan response) and device types that are not sensors (Bot, Curtain, ...) are not
/// claimed (nil).
public enum SwitchBotDecoder: AdvertisementFamily {
    /// `switchbot`.
    public static let name = "switchbot"
    /// SwitchBot's service data UUID, `fd3d`.
    public static let serviceUUID = BluetoothUUID(uuid16: 0xFD3D)
    /// The older firmware's service data UUID, `0d00`.
    public static let legacyServiceUUID = BluetoothUUID(uuid16: 0x0D00)
    /// Woan Technology's company id, `0x0969`.
    public static let companyID: UInt16 = 0x0969

    /// Decodes a SwitchBot Meter, Meter Plus, Outdoor Meter, Contact or Motion Sensor frame.
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard let service = frame.serviceData[serviceUUID] ?? frame.serviceData[legacyServiceUUID], !service.isEmpty
        else { return nil }
        let manufacturer = frame.manufacturerData[companyID] ?? []
        switch service[0] & 0x7F {
        case 0x54, 0x74: return thermometer(service, manufacturer, model: "Meter")
        case 0x69, 0x49: return thermometer(service, manufacturer, model: "Meter Plus")
        case 0x77, 0x57: return thermometer(service, manufacturer, model: "Outdoor Meter")
        case 0x64, 0x44: return contact(service, manufacturer)
        case 0x73, 0x53: return motion(service, manufacturer)
        default: return nil
        }
    }

    static func malformed(_ reason: String) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        .failure(.malformed(family: name, reason: reason))
    }

    static func result(_ values: JSONObject, model: String) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        .success(DecodedAdvertisement(decoder: name, values: values, manufacturer: "SwitchBot", model: model))
    }

    /// The battery of service data byte 2, nil when the service data is shorter; `.failure` above 100 %.
    static func battery(_ service: [UInt8]) -> (Int64?, Bool) {
        guard service.count >= 3 else { return (nil, true) }
        let battery = service[2] & 0x7F
        return (Int64(battery), battery <= 100)
    }

    static func thermometer(_ service: [UInt8], _ manufacturer: [UInt8], model: String)
        -> Result<DecodedAdvertisement, AdvertisementDecodeError>
    {
        let at: Int
        let bytes: [UInt8]
        if manufacturer.count >= 11 {
            (bytes, at) = (manufacturer, 8)
        } else if service.count >= 6 {
            (bytes, at) = (service, 3)
        } else {
            return .failure(.truncated("\(model) temperature and humidity"))
        }
        let tenths = bytes[at] & 0x0F
        let whole = bytes[at + 1] & 0x7F
        let humidity = bytes[at + 2] & 0x7F
        guard tenths <= 9 else { return malformed("tenths of a degree \(tenths) (0...9)") }
        guard humidity <= 100 else { return malformed("humidity \(humidity) % (0...100)") }
        guard whole != 0 || tenths != 0 || humidity != 0 else { return malformed("no reading yet (all zero)") }
        let (battery, batteryValid) = Self.battery(service)
        guard batteryValid else { return malformed("battery above 100 %") }
        let magnitude = Double(Int(whole) * 10 + Int(tenths)) / 10
        var values = JSONObject()
        values.append("temperature", .number(bytes[at + 1] & 0x80 != 0 ? magnitude : -magnitude))
        values.append("humidity", .integer(Int64(humidity)))
        if let battery { values.append("battery", .integer(battery)) }
        return result(values, model: model)
    }

    static func contact(_ service: [UInt8], _ manufacturer: [UInt8]) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        let motion: Bool
        let open: Bool
        let light: Bool
        if manufacturer.count >= 13 {
            let flags = manufacturer[7]
            (motion, light, open) = (flags & 0x80 != 0, flags & 0x40 != 0, flags & 0x30 != 0)
        } else if service.count >= 9 {
            (motion, light, open) = (service[1] & 0x40 != 0, service[3] & 0x01 != 0, service[3] & 0x06 != 0)
        } else {
            return .failure(.truncated("Contact Sensor state"))
        }
        let (battery, batteryValid) = Self.battery(service)
        guard batteryValid else { return malformed("battery above 100 %") }
        var values = JSONObject()
        values.append("opening", .bool(open))
        values.append("motion", .bool(motion))
        values.append("light", .bool(light))
        if let battery { values.append("battery", .integer(battery)) }
        return result(values, model: "Contact Sensor")
    }

    static func motion(_ service: [UInt8], _ manufacturer: [UInt8]) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        var motion: Bool?
        var light: Bool?
        var battery: Int64?
        if service.count >= 6 {
            motion = service[1] & 0x40 != 0
            light = service[5] & 0x02 != 0
            let level = service[2] & 0x7F
            guard level <= 100 else { return malformed("battery above 100 %") }
            battery = Int64(level)
        }
        if manufacturer.count >= 8 {
            motion = manufacturer[7] & 0x40 != 0
            light = manufacturer[7] & 0x20 != 0
        }
        guard let motion, let light else { return .failure(.truncated("Motion Sensor state")) }
        var values = JSONObject()
        values.append("motion", .bool(motion))
        values.append("light", .bool(light))
        if let battery { values.append("battery", .integer(battery)) }
        return result(values, model: "Motion Sensor")
    }
}
