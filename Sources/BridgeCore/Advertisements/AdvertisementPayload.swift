import BridgeBase

/// Builds the advertisement payload of SPEC §7 straight into bytes (the advertisement hot path:
/// no JSON tree, no hex strings, no sorting for the usual single entry):
/// `{"rssi":…,"decoder":…,"manufacturer":…,"model":…,"packet_id":…,"encrypted":true,"values":{…},"service_data":{…},"manufacturer_data":{…}}`,
/// `manufacturer` and `model` only when the decoder named them (SPEC §13), `encrypted` only for
/// an encrypted frame, `values` only when a decoder understood the frame, entries sorted by UUID
/// and company id.
public enum AdvertisementPayload {
    /// The payload of one advertisement: its RSSI (127, "not available", is `null`), what a
    /// decoder made of it, and all service and manufacturer data BlueZ holds for the device.
    /// `lockedBy`: the decoder of an encrypted frame that no configured key opens (SPEC §13):
    /// `decoder` names it, `encrypted` is true, and there are no `values` (`decoded` is then nil).
    public static func make(
        rssi: Int?, decoded: DecodedAdvertisement?, lockedBy: String? = nil, serviceData: [BluetoothUUID: [UInt8]],
        manufacturerData: [UInt16: [UInt8]]
    ) -> [UInt8] {
        var out = [UInt8]()
        var dataBytes = 0
        for bytes in serviceData.values { dataBytes += 2 * bytes.count + 48 }
        for bytes in manufacturerData.values { dataBytes += 2 * bytes.count + 16 }
        out.reserveCapacity(128 + dataBytes + (decoded.map { 24 * $0.values.count } ?? 0))
        out.append(contentsOf: #"{"rssi":"#.utf8)
        // 127: "not available" (btvirt, some controllers).
        if let rssi, rssi != 127 {
            JSONWriter.appendInteger(Int64(rssi), to: &out)
        } else {
            JSONWriter.appendNull(to: &out)
        }
        out.append(contentsOf: #","decoder":"#.utf8)
        if let decoded {
            JSONWriter.appendString(decoded.decoder, to: &out)
        } else if let lockedBy {
            JSONWriter.appendString(lockedBy, to: &out)
        } else {
            JSONWriter.appendNull(to: &out)
        }
        if let manufacturer = decoded?.manufacturer {
            out.append(contentsOf: #","manufacturer":"#.utf8)
            JSONWriter.appendString(manufacturer, to: &out)
        }
        if let model = decoded?.model {
            out.append(contentsOf: #","model":"#.utf8)
            JSONWriter.appendString(model, to: &out)
        }
        out.append(contentsOf: #","packet_id":"#.utf8)
        if let id = decoded?.packetID { JSONWriter.appendInteger(Int64(id), to: &out) } else { JSONWriter.appendNull(to: &out) }
        if decoded?.encrypted == true || (decoded == nil && lockedBy != nil) {
            out.append(contentsOf: #","encrypted":true"#.utf8)
        }
        if let decoded {
            out.append(contentsOf: #","values":"#.utf8)
            JSONWriter.append(.object(decoded.values), to: &out)
        }
        out.append(contentsOf: #","service_data":{"#.utf8)
        func service(_ uuid: BluetoothUUID, _ bytes: [UInt8], first: Bool) {
            if !first { out.append(UInt8(ascii: ",")) }
            JSONWriter.appendString(uuid.shortForm, to: &out)
            out.append(contentsOf: #":""#.utf8)
            Hex.append(bytes, to: &out)
            out.append(UInt8(ascii: "\""))
        }
        if serviceData.count <= 1 {
            for (uuid, bytes) in serviceData { service(uuid, bytes, first: true) }
        } else {
            let sorted = serviceData.sorted { $0.key.shortForm < $1.key.shortForm }
            for (n, entry) in sorted.enumerated() { service(entry.key, entry.value, first: n == 0) }
        }
        out.append(contentsOf: #"},"manufacturer_data":{"#.utf8)
        func company(_ id: UInt16, _ bytes: [UInt8], first: Bool) {
            if !first { out.append(UInt8(ascii: ",")) }
            out.append(contentsOf: #""0x"#.utf8)
            out.append(Hex.digit(UInt8(id >> 12)))
            out.append(Hex.digit(UInt8((id >> 8) & 0x0F)))
            out.append(Hex.digit(UInt8((id >> 4) & 0x0F)))
            out.append(Hex.digit(UInt8(id & 0x0F)))
            out.append(contentsOf: #"":""#.utf8)
            Hex.append(bytes, to: &out)
            out.append(UInt8(ascii: "\""))
        }
        if manufacturerData.count <= 1 {
            for (id, bytes) in manufacturerData { company(id, bytes, first: true) }
        } else {
            let sorted = manufacturerData.sorted { $0.key < $1.key }
            for (n, entry) in sorted.enumerated() { company(entry.key, entry.value, first: n == 0) }
        }
        out.append(contentsOf: "}}".utf8)
        return out
    }
}
