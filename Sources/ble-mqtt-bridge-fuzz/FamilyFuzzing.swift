import BridgeCore

/// The `families` target: the input becomes an advertisement frame of the kinds the families of
/// SPEC §13 read (``AdvertisementDecoder/families``, through the dispatcher), decoded without a
/// key and with one. Nothing may trap; a decoded frame's values must be finite numbers (or
/// booleans / strings), survive a JSON round trip, decode the same twice; `counter` is set exactly
/// when `encrypted`, and a frame decoded without a key is not encrypted.
///
/// Layout (scripts/decoders/driver.py `--write-fuzz-seeds` writes seeds in it; keep the tables in
/// step with its `FUZZ_*` tables):
///
/// - byte 0, bits 0-3: the service data UUID (0: none, else ``serviceUUIDs``[n - 1], modulo);
///   bits 4-7: the company id (0: none, 15: the two bytes after the address, little endian, else
///   ``companyIDs``[n - 1], modulo);
/// - byte 1, bits 0-3: the name (0: none, else ``names``[n - 1], modulo); bit 4: `fee5` in the
///   advertised UUIDs; bits 5-6: the key (0: none, 1: 16 bytes, 2: 12 bytes, 3: 5 bytes, taken
///   from the input after the address and company id; fewer if the input ends);
/// - bytes 2-7: the address;
/// - then the company id (with 15) and the key bytes;
/// - the rest is the data: all of it the service data, or the manufacturer data; with both, its
///   first byte splits it (that many bytes, modulo, to the service data, the rest to the
///   manufacturer data).
enum FamilyFuzzing {
    /// The service data UUIDs the decoders read (SPEC §7, §13).
    static let serviceUUIDs: [UInt16] = [0xFE95, 0xFDCD, 0xFD3D, 0x0D00, 0xFCD2, 0x181A]
    /// The company ids the families use; Govee, Inkbird, ThermoPro and SensorPush have none of
    /// their own (their frames' first bytes), hence 15, the id from the input.
    static let companyIDs: [UInt16] = [0x0969, 0x0499, 0x0133, 0x0059, 0x02E1, 0xEC88, 0x0001, 0x8801, 0x004C, 0x0006]
    /// Advertised names the families look at.
    static let names: [String] = [
        "GVH5075_1234", "Govee_H5179_AB12", "sps", "tps", "iBBQ", "TP357 (2B54)", "TP393 (7A1F)",
        "SensorPush HT.w 0CA1", "SensorPush HTP.xw F4D", "Ruuvi 1A2B", "LYWSD03MMC", "WoSensorTH", "Flower care", "IBS-TH",
    ]

    static func frame(_ bytes: [UInt8]) -> (AdvertisementFrame, key: [UInt8]?)? {
        guard bytes.count >= 2 else { return nil }
        let select = bytes[0]
        let options = bytes[1]
        var rest = bytes.dropFirst(2)
        var address: UInt64 = 0
        for byte in rest.prefix(6) { address = address << 8 | UInt64(byte) }
        rest = rest.dropFirst(6)
        var frame = AdvertisementFrame(address: BluetoothAddress(value: address))
        let serviceChoice = Int(select & 0x0F)
        let companyChoice = Int(select >> 4)
        var company: UInt16? = nil
        if companyChoice == 15 {
            let id = rest.prefix(2)
            company = id.reduce(into: (UInt16(0), 0)) { acc, byte in
                acc.0 |= UInt16(byte) << (8 * acc.1)
                acc.1 += 1
            }.0
            rest = rest.dropFirst(2)
        } else if companyChoice > 0 {
            company = companyIDs[(companyChoice - 1) % companyIDs.count]
        }
        let nameChoice = Int(options & 0x0F)
        if nameChoice > 0 { frame.name = names[(nameChoice - 1) % names.count] }
        if options & 0x10 != 0 { frame.serviceUUIDs = [BluetoothUUID(uuid16: 0xFEE5)] }
        var key: [UInt8]? = nil
        switch (options >> 5) & 0x03 {
        case 1: key = Array(rest.prefix(16)); rest = rest.dropFirst(16)
        case 2: key = Array(rest.prefix(12)); rest = rest.dropFirst(12)
        case 3: key = Array(rest.prefix(5)); rest = rest.dropFirst(5)
        default: break
        }
        let service = serviceChoice > 0 ? BluetoothUUID(uuid16: serviceUUIDs[(serviceChoice - 1) % serviceUUIDs.count]) : nil
        switch (service, company) {
        case (let uuid?, let id?):
            let split = rest.first.map { Int($0) % rest.count } ?? 0
            let data = rest.dropFirst()
            frame.serviceData[uuid] = Array(data.prefix(split))
            frame.manufacturerData[id] = Array(data.dropFirst(split))
        case (let uuid?, nil):
            frame.serviceData[uuid] = Array(rest)
        case (nil, let id?):
            frame.manufacturerData[id] = Array(rest)
        case (nil, nil):
            break
        }
        return (frame, key)
    }

    static func run(_ bytes: [UInt8]) {
        guard let (frame, key) = frame(bytes) else { return }
        let plain = AdvertisementDecoder.decode(frame, bindkey: nil)
        check(plain, frame: frame, keyed: false)
        precondition(AdvertisementDecoder.decode(frame, bindkey: nil) == plain, "decoding is not deterministic")
        if frame.serviceData.isEmpty && frame.manufacturerData.isEmpty {
            precondition(plain == nil, "a decoder claimed a frame without data")
        }
        if let key {
            check(AdvertisementDecoder.decode(frame, bindkey: key), frame: frame, keyed: true)
        }
    }

    static func check(_ result: Result<DecodedAdvertisement, AdvertisementDecodeError>?, frame: AdvertisementFrame, keyed: Bool) {
        guard case .success(let decoded)? = result else { return }
        precondition(!decoded.decoder.isEmpty, "a decoder without a name")
        for member in decoded.values { checkFinite(member.value, name: member.key, decoder: decoded.decoder) }
        let text = JSONValue.object(decoded.values).jsonBytes
        precondition((try? JSONParser.parse(text)) == .object(decoded.values), "\(decoded.decoder): values do not round-trip through JSON")
        precondition(decoded.encrypted == (decoded.counter != nil), "\(decoded.decoder): counter set without encryption or missing with it")
        precondition(keyed || !decoded.encrypted, "\(decoded.decoder): an encrypted frame decoded without a key")
    }

    static func checkFinite(_ value: JSONValue, name: String, decoder: String) {
        switch value {
        case .number(let number):
            precondition(number.isFinite, "\(decoder): \(name) is not finite (\(number))")
        case .null:
            preconditionFailure("\(decoder): \(name) is null (a quantity the frame does not carry is absent)")
        case .array(let elements):
            for element in elements { checkFinite(element, name: name, decoder: decoder) }
        case .object(let object):
            for member in object { checkFinite(member.value, name: name + "." + member.key, decoder: decoder) }
        case .bool, .integer, .string:
            break
        }
    }
}
