/// Why a decoder could not decode a frame it claims (its service data UUID matched).
public enum AdvertisementDecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The frame ends inside the named part (a BTHome object's name, `"device information"`, ...).
    case truncated(String)
    /// A BTHome object id this decoder does not know: its length is unknown, so decoding stops.
    case unknownObject(UInt8)
    /// A BTHome device-information byte with a version other than 2.
    case unsupportedVersion(Int)
    /// An encrypted BTHome frame, and no `bindkey` is configured for the device.
    case encryptedWithoutKey
    /// The configured `bindkey` is not 16 bytes long.
    case invalidKey(Int)
    /// The MIC of an encrypted BTHome frame does not verify (wrong key, or a forged or corrupted frame).
    case badMIC
    /// A plaintext BTHome frame from a device that has a `bindkey`: rejected, as a downgrade.
    case unencryptedWithKey
    /// Service data of a length no decoder of its UUID has (`uuid` is the short form, e.g. `181a`).
    case unexpectedLength(uuid: String, length: Int)
    /// A family's frame (SPEC §13) that its format does not allow: a wrong length for its type,
    /// an unknown type byte, a value outside the range the format defines. `family` is the
    /// decoder name, `reason` says what was wrong.
    case malformed(family: String, reason: String)

    /// A stable snake_case code for logs and payloads: `truncated`, `unknown_object`, ...
    public var code: String {
        switch self {
        case .truncated: return "truncated"
        case .unknownObject: return "unknown_object"
        case .unsupportedVersion: return "unsupported_version"
        case .encryptedWithoutKey: return "encrypted_without_key"
        case .invalidKey: return "invalid_key"
        case .badMIC: return "bad_mic"
        case .unencryptedWithKey: return "unencrypted_with_key"
        case .unexpectedLength: return "unexpected_length"
        case .malformed: return "malformed"
        }
    }

    /// A human-readable message.
    public var description: String {
        switch self {
        case .truncated(let part):
            return "the frame ends inside \(part)"
        case .unknownObject(let id):
            return "unknown BTHome object id 0x\(Hex.encode([id])) (decoding stops: its length is unknown)"
        case .unsupportedVersion(let version):
            return "BTHome version \(version) is not supported (only version 2)"
        case .encryptedWithoutKey:
            return "the frame is encrypted and the device has no bindkey"
        case .invalidKey(let length):
            return "the bindkey has \(length) bytes (expected 16; 12 for MiBeacon v2/v3)"
        case .badMIC:
            return "the frame's MIC does not verify (wrong bindkey, or a corrupted or forged frame)"
        case .unencryptedWithKey:
            return "a plaintext frame from a device with a bindkey (rejected as a downgrade)"
        case .unexpectedLength(let uuid, let length):
            return "service data \(uuid) of \(length) bytes matches no known format"
        case .malformed(let family, let reason):
            return "not a valid \(family) frame: \(reason)"
        }
    }
}
