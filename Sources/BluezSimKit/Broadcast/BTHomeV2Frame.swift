/// BTHome v2 service data (16-bit UUID 0xFCD2) as a sensor sends it, the simulator's own encoder, written from the
/// format documents (bthome.io/format, bthome.io/encryption) and not from the bridge's decoder, which it tests:
///
/// - one device information byte: bit 0 encryption, bit 2 trigger-based device (it sends on an event, not
///   regularly), bits 5-7 the BTHome version (0b010), the other bits 0;
/// - then the measurement objects, each an object id followed by its value, little-endian, the ids in
///   ascending order;
/// - encrypted: the objects as AES-CCM ciphertext (the bindkey, a 13-byte nonce = the device's MAC address as
///   written, the UUID `d2 fc` (0xFCD2 little-endian), the device information byte, the counter as 4 bytes
///   little-endian), followed by the counter (4 bytes, little-endian) and the 4-byte MIC.
struct BTHomeV2Frame: Sendable, Equatable {
    /// One measurement: its object id and its value's bytes (little-endian).
    struct Object: Sendable, Equatable {
        /// The object id (bthome.io/format's table).
        var id: UInt8
        /// The value, little-endian, in the object's size.
        var value: [UInt8]

        /// 0x00 packet id: uint8 (a sender's revolving number; equal ids are duplicates of one packet).
        static func packetID(_ id: UInt8) -> Object { Object(id: 0x00, value: [id]) }

        /// 0x01 battery: uint8, 1 %.
        static func battery(percent: Int) -> Object { Object(id: 0x01, value: [UInt8(clamping: percent)]) }

        /// 0x02 temperature: sint16, 0.01 °C; nil outside what it can hold (±327.67 °C).
        static func temperature(celsius: Double) -> Object? {
            guard let raw = scaled(celsius, by: 100, in: Int(Int16.min)...Int(Int16.max)) else { return nil }
            return Object(id: 0x02, value: littleEndian(UInt16(bitPattern: Int16(raw))))
        }

        /// 0x03 humidity: uint16, 0.01 %; nil outside 0...655.35.
        static func humidity(percent: Double) -> Object? {
            guard let raw = scaled(percent, by: 100, in: 0...Int(UInt16.max)) else { return nil }
            return Object(id: 0x03, value: littleEndian(UInt16(raw)))
        }

        /// 0x3A button: the event byte (0x01 press).
        static func buttonPress() -> Object { Object(id: 0x3A, value: [0x01]) }

        /// `value × factor` rounded to a whole number of steps (halves away from zero), when it fits `range`.
        static func scaled(_ value: Double, by factor: Double, in range: ClosedRange<Int>) -> Int? {
            let steps = (value * factor).rounded()
            guard steps.isFinite, steps >= Double(range.lowerBound), steps <= Double(range.upperBound) else { return nil }
            return Int(steps)
        }

        static func littleEndian(_ v: UInt16) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
    }

    /// The BTHome version in bits 5-7 of the device information byte.
    static let version2: UInt8 = 0b010 << 5
    /// Bit 0: the objects are encrypted.
    static let encryptionFlag: UInt8 = 1 << 0
    /// Bit 2: a trigger-based device (sends on events, not regularly).
    static let triggerBasedFlag: UInt8 = 1 << 2
    /// The service data UUID as the nonce carries it: 0xFCD2, least significant byte first.
    static let uuidInNonce: [UInt8] = [0xD2, 0xFC]
    /// The length of the MIC (the CCM tag) at the end of an encrypted frame.
    static let micLength = 4

    /// The measurements, in any order (the frame sorts them by id).
    var objects: [Object]
    /// Whether the device information byte says it is trigger-based.
    var triggerBased = false

    /// The device information byte.
    func deviceInformation(encrypted: Bool) -> UInt8 {
        Self.version2 | (encrypted ? Self.encryptionFlag : 0) | (triggerBased ? Self.triggerBasedFlag : 0)
    }

    /// The objects as they follow the device information byte: sorted by id (a stable sort: repeated ids keep
    /// their order), each id followed by its value.
    var objectBytes: [UInt8] {
        var out: [UInt8] = []
        let ordered = objects.enumerated().sorted { ($0.element.id, $0.offset) < ($1.element.id, $1.offset) }
        for (_, object) in ordered {
            out.append(object.id)
            out += object.value
        }
        return out
    }

    /// The service data, not encrypted.
    var plain: [UInt8] { [deviceInformation(encrypted: false)] + objectBytes }

    /// The service data encrypted with the 16-byte `key` for the device whose address is `mac` (six bytes, as the
    /// address is written: `54:48:E6:8F:80:A5` is `[0x54, 0x48, 0xE6, 0x8F, 0x80, 0xA5]`) and the frame `counter`;
    /// nil for a key or address of the wrong size (or when libcrypto fails).
    func encrypted(key: [UInt8], mac: [UInt8], counter: UInt32) -> [UInt8]? {
        guard key.count == 16, mac.count == 6 else { return nil }
        let info = deviceInformation(encrypted: true)
        let counterBytes = (0..<4).map { UInt8(truncatingIfNeeded: counter >> (8 * UInt32($0))) }
        let nonce = mac + Self.uuidInNonce + [info] + counterBytes
        guard let sealed = SimAES.ccmEncrypt(key: key, nonce: nonce, plaintext: objectBytes, tagLength: Self.micLength)
        else { return nil }
        return [info] + sealed.ciphertext + counterBytes + sealed.tag
    }
}
