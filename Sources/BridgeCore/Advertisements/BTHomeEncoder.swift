/// Builds BTHome v2 service data (UUID `fcd2`), plain or encrypted: the inverse of
/// ``BTHomeDecoder``, for tests and the BlueZ simulator.
///
/// ```swift
/// let objects = [BTHomeEncoder.Object(id: 0x00, raw: 17), BTHomeEncoder.Object(id: 0x02, value: 21.5)!]
/// let plain = BTHomeEncoder.serviceData(objects)                  // 40 00 11 02 66 08
/// let sealed = BTHomeEncoder.encryptedServiceData(objects, key: key, counter: 5, address: address)
/// ```
public enum BTHomeEncoder {
    /// One object: its id and the bytes after the id (the length byte included for text, raw and
    /// command objects).
    public struct Object: Sendable, Hashable {
        /// The object id.
        public var id: UInt8
        /// The bytes that follow the id.
        public var bytes: [UInt8]

        /// An object with exactly these bytes after the id (for frames the table would not build,
        /// such as truncated or unknown objects).
        public init(id: UInt8, encoded bytes: [UInt8]) {
            self.id = id
            self.bytes = bytes
        }

        /// An object from its raw (unscaled) integer, written little endian in the object's
        /// length (truncated to it; one byte for an id the table does not know). For text and raw
        /// objects, one byte of content; for a command, the opcode without arguments.
        public init(id: UInt8, raw: Int64) {
            self.id = id
            guard let object = BTHomeObject.forID(id) else {
                bytes = [UInt8(truncatingIfNeeded: raw)]
                return
            }
            switch object.kind {
            case .command: bytes = [0x00, UInt8(truncatingIfNeeded: raw)]
            case .text, .raw: bytes = [0x01, UInt8(truncatingIfNeeded: raw)]
            default: bytes = (0..<object.length).map { UInt8(truncatingIfNeeded: raw >> Int64(8 * $0)) }
            }
        }

        /// A text (0x53), raw (0x54) or command (0x3B: opcode, then arguments) object from its
        /// content; the length byte is added (nil when the content does not fit it, or `id` is
        /// not one of those three).
        public init?(id: UInt8, content: [UInt8]) {
            guard let object = BTHomeObject.forID(id) else { return nil }
            switch object.kind {
            case .text, .raw:
                guard content.count <= 255 else { return nil }
                bytes = [UInt8(content.count)] + content
            case .command:
                guard let opcode = content.first, content.count <= 32 else { return nil }
                bytes = [UInt8(content.count - 1), opcode] + content.dropFirst()
            default:
                return nil
            }
            self.id = id
        }

        /// A number, binary sensor or timestamp object from its value in the object's unit
        /// (`21.5` for 21.5 °C; non-zero is `true` for binary sensors), rounded to the object's
        /// resolution. Nil for an unknown id, another kind of object, or a value out of range.
        public init?(id: UInt8, value: Double) {
            guard let object = BTHomeObject.forID(id), value.isFinite else { return nil }
            let raw: Double
            switch object.kind {
            case .number, .timestamp, .packetID:
                raw = (value * Double(object.divisor) / Double(object.multiplier)).rounded()
            case .binary:
                raw = value != 0 ? 1 : 0
            default:
                return nil
            }
            let bits = 8 * object.length
            let low: Double = object.signed ? -Double(sign: .plus, exponent: bits - 1, significand: 1) : 0
            let high: Double =
                object.signed
                ? Double(sign: .plus, exponent: bits - 1, significand: 1) - 1
                : Double(sign: .plus, exponent: bits, significand: 1) - 1
            guard raw >= low, raw <= high else { return nil }
            self.init(id: id, raw: Int64(raw))
        }

        /// A button event (0x3A) by name (`"press"`, ...); nil for an unknown name.
        public static func button(_ event: String) -> Object? {
            guard let code = BTHomeObject.buttonEvents.first(where: { $0.value == event })?.key else { return nil }
            return Object(id: 0x3A, encoded: [code])
        }

        /// A dimmer event (0x3C) by name (`"rotate_left"`, ...) with its steps; nil for an unknown name.
        public static func dimmer(_ event: String, steps: UInt8) -> Object? {
            guard let code = BTHomeObject.dimmerEvents.first(where: { $0.value == event })?.key else { return nil }
            return Object(id: 0x3C, encoded: [code, steps])
        }

        /// A text object (0x53); nil when its UTF-8 is longer than 255 bytes.
        public static func text(_ text: String) -> Object? {
            Object(id: 0x53, content: Array(text.utf8))
        }
    }

    /// The device-information byte: version 2, the encryption and trigger-based flags.
    public static func deviceInformation(encrypted: Bool, triggerBased: Bool) -> UInt8 {
        0x40 | (encrypted ? 0x01 : 0) | (triggerBased ? 0x04 : 0)
    }

    /// The objects' bytes, in the given order.
    public static func objectBytes(_ objects: [Object]) -> [UInt8] {
        var bytes: [UInt8] = []
        for object in objects {
            bytes.append(object.id)
            bytes += object.bytes
        }
        return bytes
    }

    /// Plain service data: the device-information byte and the objects.
    public static func serviceData(_ objects: [Object], triggerBased: Bool = false) -> [UInt8] {
        [deviceInformation(encrypted: false, triggerBased: triggerBased)] + objectBytes(objects)
    }

    /// Encrypted service data: the device-information byte, the objects encrypted with AES-CCM,
    /// the counter (little endian) and the 4-byte MIC. Nil unless `key` has 16 bytes.
    public static func encryptedServiceData(
        _ objects: [Object], key: [UInt8], counter: UInt32, address: BluetoothAddress, triggerBased: Bool = false
    ) -> [UInt8]? {
        encrypt(objectBytes(objects), key: key, counter: counter, address: address, triggerBased: triggerBased)
    }

    /// Encrypted service data for an already encoded object sequence (any bytes). Nil unless
    /// `key` has 16 bytes.
    public static func encrypt(
        _ plaintext: [UInt8], key: [UInt8], counter: UInt32, address: BluetoothAddress, triggerBased: Bool = false
    ) -> [UInt8]? {
        guard let ccm = AESCCM(key: key, tagLength: 4) else { return nil }
        let info = deviceInformation(encrypted: true, triggerBased: triggerBased)
        let counterBytes = (0..<4).map { UInt8(truncatingIfNeeded: counter >> UInt32(8 * $0)) }
        let nonce = address.bytes + [0xD2, 0xFC, info] + counterBytes
        guard let (ciphertext, tag) = ccm.encrypt(plaintext, nonce: nonce) else { return nil }
        return [info] + ciphertext + counterBytes + tag
    }
}
