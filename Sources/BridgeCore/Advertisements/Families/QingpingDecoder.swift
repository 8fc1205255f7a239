/// The `qingping` family (SPEC §13): Qingping's own format in service data `fdcd`.
///
/// A frame is: a flags byte (bit 6: an event frame), the device type (the model: CGG1, CGH1,
/// CGP1W, CGDK2, CGPR1, ...), the MAC (6 bytes, reversed), then records: id, length, value
/// (little endian). Values, in frame order:
///
/// | record | value |
/// |---|---|
/// | 0x01 (4) | `temperature` sint16 × 0.1 °C, `humidity` uint16 × 0.1 % |
/// | 0x02 (1) | `battery` % (0...100; 0xFF, an externally powered device, is no battery) |
/// | 0x04 (1) | `opening`: 0 open, 1 closed, 2 open too long |
/// | 0x07 (2) | `pressure` uint16 × 0.1 hPa |
/// | 0x08 (4) | `motion` (byte 0), `illuminance` uint24 lx (bytes 1-3; not in event frames, where they are no reading) |
/// | 0x09 (4) | `illuminance` uint32 lx |
/// | 0x12 (4) | `pm2_5`, `pm10` uint16 µg/m³ |
/// | 0x13 (2) | `co2` uint16 ppm |
/// | 0x0F (1) | the packet id (``DecodedAdvertisement/packetID``), not a value |
///
/// Other records (a light flag, a VOC index, noise, a capability bitmap) are skipped by their
/// length. A frame with none of the values above is no reading: nil. Refused (`.failure`): a
/// frame shorter than its header, an unknown device type, a record cut short, a known record of
/// the wrong length, a value outside its range.
public enum QingpingDecoder: AdvertisementFamily {
    /// The decoder name in payloads.
    public static let name = "qingping"
    /// The service data UUID, `0000fdcd-0000-1000-8000-00805f9b34fb` (Qingping).
    public static let serviceUUID = BluetoothUUID(uuid16: 0xFDCD)

    /// The model of a device type byte, or nil for an unknown one.
    static func model(_ type: UInt8) -> String? {
        switch type {
        case 0x01, 0x07, 0x16: return "CGG1"
        case 0x04: return "CGH1"
        case 0x09: return "CGP1W"
        case 0x0C: return "CGD1"
        case 0x0E, 0x24: return "CGDN1"
        case 0x0F: return "CGM1"
        case 0x10: return "CGDK2"
        case 0x12: return "CGPR1"
        case 0x15: return "CGF1W"
        case 0x18, 0x26: return "CGP23W"
        case 0x1E: return "CGC1"
        case 0x33, 0x5D: return "CGP22C"
        case 0x4F: return "CGG3"
        case 0x52, 0x62: return "CGR1PC"
        default: return nil
        }
    }

    static func malformed(_ reason: String) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        .failure(.malformed(family: name, reason: reason))
    }

    /// Decodes the frame's `fdcd` service data; nil when it has none, or no reading.
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard let data = frame.serviceData[serviceUUID] else { return nil }
        guard data.count >= 8 else { return .failure(.truncated("Qingping header")) }
        guard let model = model(data[1]) else { return malformed("unknown device type \(data[1])") }
        let event = data[0] & 0x40 != 0
        var values = JSONObject()
        var packetID: Int? = nil
        var i = 8
        while i < data.count {
            guard data.count - i >= 2 else { return .failure(.truncated("Qingping record header")) }
            let id = data[i]
            let length = Int(data[i + 1])
            let at = i + 2
            guard data.count - at >= length else { return .failure(.truncated("Qingping record \(id)")) }
            i = at + length
            func u16(_ o: Int) -> UInt16 { UInt16(data[at + o]) | UInt16(data[at + o + 1]) << 8 }
            let expected: Int
            switch id {
            case 0x01, 0x08, 0x09, 0x12: expected = 4
            case 0x07, 0x13: expected = 2
            case 0x02, 0x04, 0x0F: expected = 1
            default: continue
            }
            guard length == expected else { return malformed("record \(id) of \(length) bytes") }
            switch id {
            case 0x01:
                XiaomiObjects.add(&values, "temperature", .number(Double(Int16(bitPattern: u16(0))) / 10))
                XiaomiObjects.add(&values, "humidity", .number(Double(u16(2)) / 10))
            case 0x02:
                guard data[at] != 0xFF else { break }
                guard data[at] <= 100 else { return malformed("battery \(data[at]) % (above 100)") }
                XiaomiObjects.add(&values, "battery", .integer(Int64(data[at])))
            case 0x04:
                guard data[at] <= 2 else { return malformed("door state \(data[at])") }
                XiaomiObjects.add(&values, "opening", .bool(data[at] != 1))
            case 0x07:
                XiaomiObjects.add(&values, "pressure", .number(Double(u16(0)) / 10))
            case 0x08:
                XiaomiObjects.add(&values, "motion", .bool(data[at] != 0))
                if !event {
                    XiaomiObjects.add(&values, "illuminance", .integer(Int64(u16(1)) | Int64(data[at + 3]) << 16))
                }
            case 0x09:
                XiaomiObjects.add(&values, "illuminance", .integer(Int64(u16(0)) | Int64(u16(2)) << 16))
            case 0x12:
                XiaomiObjects.add(&values, "pm2_5", .integer(Int64(u16(0))))
                XiaomiObjects.add(&values, "pm10", .integer(Int64(u16(2))))
            case 0x13:
                XiaomiObjects.add(&values, "co2", .integer(Int64(u16(0))))
            default:
                packetID = Int(data[at])
            }
        }
        if values.isEmpty { return nil }
        return .success(
            DecodedAdvertisement(decoder: name, packetID: packetID, values: values, manufacturer: "Qingping", model: model))
    }
}
