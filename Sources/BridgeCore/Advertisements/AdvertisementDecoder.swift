/// Picks the decoder for an advertisement: BTHome v2 (service data `fcd2`) first, then the
/// pvvx / ATC1441 formats (service data `181a`), then the families of SPEC §13 in the order of
/// ``families`` (at most one decoder per frame: the first that claims it).
public enum AdvertisementDecoder {
    /// The maker families (SPEC §13), asked in this order. Families recognised by a service UUID
    /// or a real company id come before those recognised by bytes and name alone, so that the
    /// latter never claim another family's frame.
    public static let families: [any AdvertisementFamily.Type] = [
        XiaomiDecoder.self, QingpingDecoder.self, SwitchBotDecoder.self, RuuviDecoder.self, BlueMaestroDecoder.self,
        MopekaDecoder.self, VictronDecoder.self,
        // Told by bytes and name alone: after every family with a service UUID or a company id.
        GoveeDecoder.self, InkbirdDecoder.self, ThermoProDecoder.self, SensorPushDecoder.self,
    ]


    /// Decodes `frame`: nil when no decoder applies to it, `.failure` for a frame a decoder
    /// claims but cannot decode. `bindkey` is the device's BTHome key (16 bytes), if configured.
    ///
    /// Replay protection is the caller's: feed ``DecodedAdvertisement/counter`` of each
    /// successfully decoded encrypted frame to the device's ``BTHomeReplayGuard``.
    public static func decode(_ frame: AdvertisementFrame, bindkey: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        claim(frame, bindkey: bindkey)?.result
    }

    /// What ``decode(_:bindkey:)`` does, and which decoder claimed the frame: the runtime names
    /// the family of a frame it cannot read (`"xiaomi"` for an encrypted MiBeacon without a
    /// `bindkey`). `families` is ``families`` but in tests, which add their own.
    public static func claim(
        _ frame: AdvertisementFrame, bindkey: [UInt8]?, families: [any AdvertisementFamily.Type] = families
    ) -> AdvertisementClaim? {
        if let data = frame.serviceData[BTHomeDecoder.serviceUUID] {
            return AdvertisementClaim(
                decoder: BTHomeDecoder.name, result: BTHomeDecoder.decode(serviceData: data, address: frame.address, bindkey: bindkey))
        }
        if let data = frame.serviceData[XiaomiCustomDecoder.serviceUUID] {
            let result = XiaomiCustomDecoder.decode(serviceData: data)
            let name: String
            if case .success(let decoded) = result { name = decoded.decoder } else { name = "pvvx" }
            return AdvertisementClaim(decoder: name, result: result)
        }
        for family in families {
            if let result = family.decode(frame, key: bindkey) { return AdvertisementClaim(decoder: family.name, result: result) }
        }
        return nil
    }
}

/// Rejects encrypted frames (BTHome, MiBeacon, ...) whose counter does not increase: one per
/// device, fed the ``DecodedAdvertisement/counter`` (and ``DecodedAdvertisement/counterBits``)
/// of each frame whose MIC verified. The first counter is always accepted (the bridge may
/// start at any point of a device's life).
public struct BTHomeReplayGuard: Sendable, Hashable {
    /// The highest counter accepted so far.
    public private(set) var lastCounter: UInt32?

    /// Creates a guard that has seen no frame.
    public init() {}

    /// Whether a frame with this counter is new: true (and remembered) when it is above every
    /// counter accepted before, false for a repeat or an older counter (a replay, or the same
    /// advertisement seen again).
    public mutating func accept(counter: UInt32) -> Bool {
        accept(counter: counter, bits: 32)
    }

    /// ``accept(counter:)`` for a counter of `bits` bits (1...32) that wraps (MiBeacon v2/v3:
    /// 8): below 32 bits, a counter is new when it is ahead of the last one accepted by less
    /// than half the counter's range, modulo the range (serial number arithmetic, RFC 1982):
    /// with 8 bits, 255 → 0 is accepted, and so is a jump of up to 127; a repeat or a replay of
    /// the last 128 frames is not.
    public mutating func accept(counter: UInt32, bits: Int) -> Bool {
        guard bits < 32, bits > 0 else {
            if let last = lastCounter, counter <= last { return false }
            lastCounter = counter
            return true
        }
        let mask = (UInt32(1) << UInt32(bits)) &- 1
        let value = counter & mask
        if let last = lastCounter {
            let ahead = (value &- last) & mask
            guard ahead != 0, ahead <= mask >> 1 else { return false }
        }
        lastCounter = value
        return true
    }

    /// Forgets the counters seen (e.g. when the device's bindkey changes, or it was reset and
    /// restarted its counter).
    public mutating func reset() {
        lastCounter = nil
    }
}
