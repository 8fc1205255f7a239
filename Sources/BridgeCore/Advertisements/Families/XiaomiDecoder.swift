/// The `xiaomi` family (SPEC §13): MiBeacon versions 2 to 5 in service data `fe95`.
///
/// A frame is: frame control (uint16 LE: bit 3 encrypted, bit 4 MAC included, bit 5 capability
/// included, bit 6 object included, bit 7 mesh, bits 12-15 version), product id (uint16 LE, the
/// model: ``XiaomiProducts``), frame counter (uint8, the packet id), the MAC (6 bytes, reversed)
/// when bit 4 is set, the capability byte when bit 5 is set (followed by a 2-byte I/O
/// capability when its own bit 5 is set), then the objects: id (uint16 LE), length (uint8),
/// value (1 or 2 bytes after the last object are ignored, as devices send them). Values, in
/// frame order:
///
/// | object | value |
/// |---|---|
/// | 0x1004 | `temperature` sint16 × 0.1 °C |
/// | 0x1006 | `humidity` uint16 × 0.1 % |
/// | 0x100D | `temperature`, `humidity` as above |
/// | 0x100A, 0x4803, 0x4C03 | `battery` uint8 % (0...100) |
/// | 0x1007 | `illuminance` uint24 lx (MJYD02YL, MCCGQ02HL: a light flag, not read) |
/// | 0x1008 | `moisture` uint8 % |
/// | 0x1009 | `conductivity` uint16 µS/cm |
/// | 0x1010 | `formaldehyde` uint16 × 0.01 mg/m³ |
/// | 0x4801, 0x4C01 | `temperature` float32 °C (rounded to 0.1 / 0.01) |
/// | 0x4802, 0x4C02 | `humidity` uint8 % |
/// | 0x4808, 0x4C08 | `humidity` float32 % (rounded to 0.1 / 0.01) |
/// | 0x1019 | `opening` (0 open, 1 closed, 2 left open; 3, a reset, is not a state) |
/// | 0x4804, 0x4A12 | `opening` (1 open, 2 closed) |
/// | 0x4A1A | `opening` true when 1 (left open) |
/// | 0x000A | `temperature` sint16 × 0.01 °C (body thermometers; 0 is no reading) |
/// | 0x4805 | `illuminance` float32 lx (rounded to 0.01) |
/// | 0x2000 | `battery` (byte 4; the two raw body temperatures are not published) |
/// | 0x000F | `motion` true, and for CGPR1 `illuminance` uint24 lx |
/// | 0x1017 (uint32), 0x4818 (uint16) | `motion`: seconds without motion ≤ 30 |
/// | 0x4A08 | `motion` true, `illuminance` float32 lx |
/// | 0x101B | `motion` false |
/// | 0x4A01, 0x4E01 | `battery_low` |
///
/// Other objects (buttons, locks, scales, ...) are skipped. A frame without an object (the
/// presence and pairing advertisement devices send between readings) or with none of the
/// objects above carries no reading: the decoder returns nil for it, as for a frame of no family.
///
/// Encryption (bit 3), with the device's `bindkey`:
/// - v4/v5: AES-CCM, 16-byte key, the objects' ciphertext followed by a 3-byte extended counter
///   and a 4-byte MIC; nonce = MAC (reversed) + product id + frame counter + extended counter,
///   associated data `11`. ``DecodedAdvertisement/counter`` is extended counter << 8 | frame counter.
/// - v2/v3: AES-CCM with the 12-byte key expanded to 16 (`key[0..<6] 8d3d3c97 key[6..<12]`),
///   nonce = the first 5 frame bytes + the 3 bytes before the last + the MAC (reversed) without
///   its last byte, associated data `11`; the frame's last byte is the first byte of the
///   16-byte CCM tag (a 1-byte MIC: a wrong key passes with a chance of 1 in 256, where the
///   object structure usually stops it). The counter is the 8-bit frame counter, which wraps:
///   ``DecodedAdvertisement/counterBits`` is 8, and ``BTHomeReplayGuard`` compares it modulo 256.
///
/// Refused (`.failure`): a frame shorter than its header, mesh frames, versions outside 2...5,
/// unknown product ids, a MAC that is not the advertiser's, an object cut short or of the wrong
/// length, values outside their range, a wrong MIC; encrypted frames without a key
/// (``AdvertisementDecodeError/encryptedWithoutKey``), and plaintext frames with objects from a
/// device that has a key (``AdvertisementDecodeError/unencryptedWithKey``: accepting them would
/// let anyone in radio range bypass the key).
public enum XiaomiDecoder: AdvertisementFamily {
    /// The decoder name in payloads.
    public static let name = "xiaomi"
    /// The service data UUID, `0000fe95-0000-1000-8000-00805f9b34fb` (Xiaomi).
    public static let serviceUUID = BluetoothUUID(uuid16: 0xFE95)

    /// Decodes the frame's `fe95` service data; nil when it has none, or no reading.
    public static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard let data = frame.serviceData[serviceUUID] else { return nil }
        return decode(data, address: frame.address, key: key)
    }

    static func malformed(_ reason: String) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        .failure(.malformed(family: name, reason: reason))
    }

    static func decode(_ data: [UInt8], address: BluetoothAddress, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        guard data.count >= 5 else { return .failure(.truncated("MiBeacon header")) }
        let control = UInt16(data[0]) | UInt16(data[1]) << 8
        let version = Int(control >> 12)
        guard control & 0x0080 == 0 else { return malformed("mesh frames are not MiBeacon advertisements") }
        guard (2...5).contains(version) else { return malformed("MiBeacon version \(version) (expected 2 to 5)") }
        let productID = UInt16(data[2]) | UInt16(data[3]) << 8
        guard let model = XiaomiProducts.model(productID) else { return malformed("unknown product id \(productID)") }
        var start = 5
        var mac = address.value
        if control & 0x0010 != 0 {
            guard data.count >= 11 else { return .failure(.truncated("MAC address")) }
            var framed: UInt64 = 0
            for k in 0..<6 { framed |= UInt64(data[5 + k]) << UInt64(8 * k) }
            guard framed == address.value else { return malformed("the frame's MAC is not the advertiser's address") }
            mac = framed
            start = 11
        }
        if control & 0x0020 != 0 {
            guard data.count > start else { return .failure(.truncated("capability")) }
            let capability = data[start]
            start += 1
            if capability & 0x20 != 0 {
                guard data.count >= start + 2 else { return .failure(.truncated("I/O capability")) }
                start += 2
            }
        }
        // No object: a presence / pairing advertisement, no reading.
        guard control & 0x0040 != 0 else { return nil }
        let encrypted = control & 0x0008 != 0
        var counter: UInt32? = nil
        var counterBits = 32
        let objects: [UInt8]
        var objectsStart = start
        var objectsEnd = data.count
        if encrypted {
            guard let key else { return .failure(.encryptedWithoutKey) }
            if version >= 4 {
                guard key.count == 16, let ccm = AESCCM(key: key, tagLength: 4) else { return .failure(.invalidKey(key.count)) }
                guard data.count >= start + 3 + 7 else { return .failure(.truncated("encrypted object, counter and MIC")) }
                let counterStart = data.count - 7
                let micStart = data.count - 4
                var nonce = [UInt8](repeating: 0, count: 12)
                for k in 0..<6 { nonce[k] = UInt8(truncatingIfNeeded: mac >> UInt64(8 * k)) }
                nonce[6] = data[2]
                nonce[7] = data[3]
                nonce[8] = data[4]
                nonce[9] = data[counterStart]
                nonce[10] = data[counterStart + 1]
                nonce[11] = data[counterStart + 2]
                guard
                    let plain = ccm.decrypt(
                        Array(data[start..<counterStart]), nonce: nonce, tag: Array(data[micStart...]), aad: [0x11])
                else { return .failure(.badMIC) }
                counter = UInt32(data[4]) | UInt32(data[counterStart]) << 8 | UInt32(data[counterStart + 1]) << 16
                    | UInt32(data[counterStart + 2]) << 24
                objects = plain
            } else {
                guard key.count == 12 else { return .failure(.invalidKey(key.count)) }
                guard data.count >= start + 3 + 4 else { return .failure(.truncated("encrypted object, counter and MIC")) }
                var expanded = [UInt8](repeating: 0, count: 16)
                for k in 0..<6 { expanded[k] = key[k] }
                expanded[6] = 0x8D
                expanded[7] = 0x3D
                expanded[8] = 0x3C
                expanded[9] = 0x97
                for k in 6..<12 { expanded[k + 4] = key[k] }
                guard let ccm = AESCCM(key: expanded, tagLength: 16) else { return .failure(.invalidKey(key.count)) }
                var nonce = [UInt8](repeating: 0, count: 13)
                for k in 0..<5 { nonce[k] = data[k] }
                let tail = data.count - 4
                nonce[5] = data[tail]
                nonce[6] = data[tail + 1]
                nonce[7] = data[tail + 2]
                for k in 0..<5 { nonce[8 + k] = UInt8(truncatingIfNeeded: mac >> UInt64(8 * k)) }
                // CCM's payload cipher is CTR: encrypting the ciphertext gives the plaintext back;
                // encrypting that gives the tag, whose first byte is the frame's MIC.
                let aad: [UInt8] = [0x11]
                guard let plain = ccm.encrypt(Array(data[start..<tail]), nonce: nonce, aad: aad)?.ciphertext,
                    let check = ccm.encrypt(plain, nonce: nonce, aad: aad), check.tag.first == data[data.count - 1]
                else { return .failure(.badMIC) }
                counter = UInt32(data[4])
                counterBits = 8
                objects = plain
            }
            objectsStart = 0
            objectsEnd = objects.count
        } else {
            if key != nil { return .failure(.unencryptedWithKey) }
            objects = data
        }
        switch XiaomiObjects.read(objects, from: objectsStart, to: objectsEnd, model: model) {
        case .failure(let error):
            return .failure(error)
        case .success(let values):
            if values.isEmpty { return nil }
            return .success(
                DecodedAdvertisement(
                    decoder: name, packetID: Int(data[4]), values: values, encrypted: encrypted, counter: counter,
                    counterBits: counterBits, manufacturer: XiaomiProducts.manufacturer(productID), model: model))
        }
    }
}
