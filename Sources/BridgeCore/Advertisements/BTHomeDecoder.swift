/// The BTHome v2 decoder: service data of UUID `fcd2` (bthome.io/format).
///
/// The service data is a device-information byte (bit 0 encrypted, bit 1 MAC included, bit 2
/// trigger based, bits 5-7 version = 2), the MAC (6 bytes, reversed) when bit 1 is set, then the
/// objects: an id byte and a value of the length ``BTHomeObject`` gives (text, raw and command
/// objects have a length byte after the id). An encrypted frame carries the objects as AES-CCM
/// ciphertext followed by a 4-byte counter (little endian) and a 4-byte MIC; the nonce is the
/// MAC (6 bytes, as written), `d2 fc`, the device-information byte and the counter bytes.
///
/// Values (``DecodedAdvertisement/values``), in frame order:
/// - numbers: `"temperature": 21.5` (an integer when the object's factor is 1: `"battery": 91`);
/// - binary sensors: `"door": true`;
/// - button events: `"button": "press"` (`"none"` for code 0: a multi-button device reports
///   every button, so `button_2` is always the second); dimmer events: `"dimmer": "rotate_left",
///   "dimmer_steps": 3` (just `"dimmer": "none"` for code 0); commands: `"command": "toggle"`
///   and, when it has arguments, `"command_args": "<hex>"`. Event codes the format does not
///   define are not reported (the object still counts for the numbering below);
/// - text: a string (invalid UTF-8 repaired with U+FFFD); raw: a hex string; timestamp: integer
///   seconds since 1970; 0xF0: `device_type_id`; 0xF1/0xF2: `"firmware_version": "4.2.1.0"`.
///
/// The second object of a name is `<name>_2`, the third `<name>_3`, ...; a dimmer's steps follow
/// its name: `dimmer_2_steps`. The packet id (object 0x00, the first one) is
/// ``DecodedAdvertisement/packetID``, not a value.
///
/// An unknown object id stops decoding (its length is unknown) with
/// ``AdvertisementDecodeError/unknownObject(_:)``; an object cut short fails with
/// ``AdvertisementDecodeError/truncated(_:)``. A plaintext frame from a device that has a bindkey
/// is rejected (``AdvertisementDecodeError/unencryptedWithKey``): accepting it would let anyone
/// in radio range bypass the key.
public enum BTHomeDecoder {
    /// The decoder's name in payloads.
    public static let name = "bthome_v2"
    /// The service data UUID, `0000fcd2-0000-1000-8000-00805f9b34fb`.
    public static let serviceUUID = BluetoothUUID(uuid16: 0xFCD2)

    /// Decodes one frame's `fcd2` service data; `address` is the advertiser's (the nonce's MAC
    /// unless the frame includes one).
    public static func decode(
        serviceData data: [UInt8], address: BluetoothAddress, bindkey: [UInt8]?
    ) -> Result<DecodedAdvertisement, AdvertisementDecodeError> {
        guard let info = data.first else { return .failure(.truncated("device information")) }
        let version = Int(info >> 5)
        guard version == 2 else { return .failure(.unsupportedVersion(version)) }
        let encrypted = info & 0x01 != 0
        let macIncluded = info & 0x02 != 0
        let triggerBased = info & 0x04 != 0
        var start = 1
        var nonceAddress = address.bytes
        if macIncluded {
            guard data.count >= 7 else { return .failure(.truncated("MAC address")) }
            nonceAddress = data[1..<7].reversed()
            start = 7
        }
        var counter: UInt32? = nil
        let objects: [UInt8]
        if encrypted {
            guard let bindkey else { return .failure(.encryptedWithoutKey) }
            guard let ccm = AESCCM(key: bindkey, tagLength: 4) else { return .failure(.invalidKey(bindkey.count)) }
            guard data.count - start >= 8 else { return .failure(.truncated("encryption counter and MIC")) }
            let micStart = data.count - 4
            let counterStart = micStart - 4
            let counterBytes = Array(data[counterStart..<micStart])
            let nonce = nonceAddress + [0xD2, 0xFC, info] + counterBytes
            guard
                let plaintext = ccm.decrypt(
                    Array(data[start..<counterStart]), nonce: nonce, tag: Array(data[micStart...]))
            else { return .failure(.badMIC) }
            counter = UInt32(counterBytes[0]) | UInt32(counterBytes[1]) << 8 | UInt32(counterBytes[2]) << 16
                | UInt32(counterBytes[3]) << 24
            objects = plaintext
        } else {
            if bindkey != nil { return .failure(.unencryptedWithKey) }
            objects = Array(data[start...])
        }
        return decodeObjects(objects).map { parsed in
            DecodedAdvertisement(
                decoder: name, packetID: parsed.packetID, values: parsed.values, encrypted: encrypted, counter: counter,
                triggerBased: triggerBased)
        }
    }

    /// Decodes a plaintext object sequence: the packet id (object 0x00) and the values.
    public static func decodeObjects(_ bytes: [UInt8]) -> Result<(packetID: Int?, values: JSONObject), AdvertisementDecodeError> {
        var values = JSONObject()
        var packetID: Int? = nil
        var seen = NameCounter()
        var index = 0
        let end = bytes.count
        while index < end {
            let id = bytes[index]
            guard let object = BTHomeObject.forID(id) else { return .failure(.unknownObject(id)) }
            index += 1
            var length = object.length
            if object.hasLengthByte {
                guard index < end else { return .failure(.truncated(object.name)) }
                let lengthByte = bytes[index]
                index += 1
                if object.kind == .command {
                    // High 3 bits reserved; the low 5 count the arguments after the opcode.
                    length = 1 + Int(lengthByte & 0x1F)
                } else {
                    length = Int(lengthByte)
                }
            }
            guard end - index >= length else { return .failure(.truncated(object.name)) }
            let field = bytes[index..<(index + length)]
            index += length

            if object.kind == .packetID {
                if packetID == nil { packetID = Int(field[field.startIndex]) }
                continue
            }
            let key = seen.key(for: object.name)
            switch object.kind {
            case .packetID:
                break
            case .number:
                let raw = integer(field, signed: object.signed)
                if object.multiplier == 1 && object.divisor == 1 {
                    values.append(key, .integer(raw))
                } else {
                    values.append(key, .number(Double(raw &* object.multiplier) / Double(object.divisor)))
                }
            case .binary:
                values.append(key, .bool(field[field.startIndex] != 0))
            case .button:
                if let event = BTHomeObject.buttonEvents[field[field.startIndex]] {
                    values.append(key, .string(event))
                }
            case .dimmer:
                if let event = BTHomeObject.dimmerEvents[field[field.startIndex]] {
                    values.append(key, .string(event))
                    if event != "none" {
                        values.append(key + "_steps", .integer(Int64(field[field.startIndex + 1])))
                    }
                }
            case .command:
                if let command = BTHomeObject.commands[field[field.startIndex]] {
                    values.append(key, .string(command))
                    if field.count > 1 {
                        values.append(key + "_args", .string(Hex.encode(field.dropFirst())))
                    }
                }
            case .text:
                values.append(key, .string(String(decoding: field, as: UTF8.self)))
            case .raw:
                values.append(key, .string(Hex.encode(field)))
            case .timestamp:
                values.append(key, .integer(integer(field, signed: false)))
            case .firmwareVersion:
                values.append(key, .string(field.reversed().map { String($0) }.joined(separator: ".")))
            }
        }
        return .success((packetID, values))
    }

    /// A little-endian integer of at most 8 bytes (the table's are at most 4).
    static func integer(_ bytes: ArraySlice<UInt8>, signed: Bool) -> Int64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        for byte in bytes.prefix(8) {
            value |= UInt64(byte) << shift
            shift += 8
        }
        if signed, shift > 0, shift < 64, value >> (shift - 1) & 1 == 1 {
            value |= ~0 << shift
        }
        return Int64(bitPattern: value)
    }

    /// Numbers repeated names: `button`, `button_2`, `button_3`, ...
    struct NameCounter {
        var counts: [(name: String, count: Int)] = []

        mutating func key(for name: String) -> String {
            for index in counts.indices where counts[index].name == name {
                counts[index].count += 1
                return "\(name)_\(counts[index].count)"
            }
            counts.append((name, 1))
            return name
        }
    }
}
