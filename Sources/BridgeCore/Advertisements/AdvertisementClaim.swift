/// A frame a decoder claimed (``AdvertisementDecoder/claim(_:bindkey:families:)``): the
/// decoder's name and what it made of the frame.
public struct AdvertisementClaim: Sendable, Hashable {
    /// The decoder that claimed the frame (`"bthome_v2"`, `"xiaomi"`, ...).
    public var decoder: String
    /// The decoded frame, or why it could not be decoded.
    public var result: Result<DecodedAdvertisement, AdvertisementDecodeError>

    /// Creates a claim.
    public init(decoder: String, result: Result<DecodedAdvertisement, AdvertisementDecodeError>) {
        self.decoder = decoder
        self.result = result
    }

    /// The decoded frame, nil when it could not be decoded.
    public var decoded: DecodedAdvertisement? {
        if case .success(let decoded) = result { return decoded }
        return nil
    }

    /// Whether the frame is encrypted and no key was given (SPEC §13: "needs a bindkey").
    public var needsKey: Bool { result == .failure(.encryptedWithoutKey) }

    /// What `ble-mqtt-bridge scan` says of the frame: `govee H5075 temperature=21.5 humidity=45`,
    /// `bthome_v2 #17 temperature=21.5`, `xiaomi encrypted (needs a bindkey)`; nil for a frame
    /// the decoder could not read otherwise (malformed, a wrong key).
    public var summary: String? {
        switch result {
        case .failure(.encryptedWithoutKey):
            return "\(decoder) encrypted (needs a bindkey)"
        case .failure:
            return nil
        case .success(let decoded):
            var text = decoded.decoder
            if let model = decoded.model { text += " " + model }
            if let id = decoded.packetID { text += " #\(id)" }
            for member in decoded.values {
                text += " \(member.key)=" + String(decoding: member.value.jsonBytes, as: UTF8.self)
            }
            return text
        }
    }
}
