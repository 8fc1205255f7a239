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

extension AdvertisementDecoder {
    /// ``claim(_:bindkey:families:)``; when that reads nothing from a frame with several
    /// manufacturer-data entries, the first entry (by company id, at most 16 tried) that a
    /// decoder reads on its own. BlueZ keeps an entry for every company id a device ever sent,
    /// and the families whose "company id" is data (ThermoPro, Inkbird, SensorPush) refuse a
    /// frame with several: whether a device is a family's (`advertisements: decodable`, `scan`)
    /// is still told by any one of them. Not for publishing: which entry is the newest is unknown.
    public static func claimAnyEntry(
        _ frame: AdvertisementFrame, bindkey: [UInt8]?, families: [any AdvertisementFamily.Type] = families
    ) -> AdvertisementClaim? {
        let whole = claim(frame, bindkey: bindkey, families: families)
        guard frame.manufacturerData.count > 1, whole?.decoded == nil, whole?.needsKey != true else { return whole }
        for id in frame.manufacturerData.keys.sorted().prefix(16) {
            var single = frame
            single.manufacturerData = [id: frame.manufacturerData[id] ?? []]
            if let one = claim(single, bindkey: bindkey, families: families), one.decoded != nil || one.needsKey { return one }
        }
        return whole
    }
}
