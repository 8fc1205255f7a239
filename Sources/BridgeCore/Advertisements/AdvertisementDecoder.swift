/// Picks the decoder for an advertisement: BTHome v2 (service data `fcd2`) first, then the
/// pvvx / ATC1441 formats (service data `181a`), then the families of SPEC §13 in the order of
/// ``families`` (at most one decoder per frame: the first that claims it).
public enum AdvertisementDecoder {
    /// The maker families (SPEC §13), asked in this order. Families recognised by a service UUID
    /// or a real company id come before those recognised by bytes and name alone, so that the
    /// latter never claim another family's frame.
    public static let families: [any AdvertisementFamily.Type] = [
        GoveeDecoder.self, InkbirdDecoder.self, ThermoProDecoder.self, SensorPushDecoder.self,
    ]


    /// Decodes `frame`: nil when no decoder applies to it, `.failure` for a frame a decoder
    /// claims but cannot decode. `bindkey` is the device's BTHome key (16 bytes), if configured.
    ///
    /// Replay protection is the caller's: feed ``DecodedAdvertisement/counter`` of each
    /// successfully decoded encrypted frame to the device's ``BTHomeReplayGuard``.
    public static func decode(_ frame: AdvertisementFrame, bindkey: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        if let data = frame.serviceData[BTHomeDecoder.serviceUUID] {
            return BTHomeDecoder.decode(serviceData: data, address: frame.address, bindkey: bindkey)
        }
        if let data = frame.serviceData[XiaomiCustomDecoder.serviceUUID] {
            return XiaomiCustomDecoder.decode(serviceData: data)
        }
        for family in families {
            if let result = family.decode(frame, key: bindkey) { return result }
        }
        return nil
    }
}

/// Rejects encrypted BTHome frames whose counter does not increase: one per device, fed the
/// ``DecodedAdvertisement/counter`` of each frame whose MIC verified. The first counter is
/// always accepted (the bridge may start at any point of a device's life).
public struct BTHomeReplayGuard: Sendable, Hashable {
    /// The highest counter accepted so far.
    public private(set) var lastCounter: UInt32?

    /// Creates a guard that has seen no frame.
    public init() {}

    /// Whether a frame with this counter is new: true (and remembered) when it is above every
    /// counter accepted before, false for a repeat or an older counter (a replay, or the same
    /// advertisement seen again).
    public mutating func accept(counter: UInt32) -> Bool {
        if let last = lastCounter, counter <= last { return false }
        lastCounter = counter
        return true
    }

    /// Forgets the counters seen (e.g. when the device's bindkey changes, or it was reset and
    /// restarted its counter).
    public mutating func reset() {
        lastCounter = nil
    }
}
