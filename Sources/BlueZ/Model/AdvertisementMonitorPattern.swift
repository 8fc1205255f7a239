/// One or-pattern of an advertisement monitor (passive scanning): matches when the advertisement
/// data structure of type `adType` has `content` at offset `start` of its data.
public struct AdvertisementMonitorPattern: Sendable, Hashable {
    /// The offset in the data structure's data where `content` must begin.
    public var start: UInt8
    /// The AD type of the data structure (0x16: service data of a 16-bit UUID).
    public var adType: UInt8
    /// The bytes to match.
    public var content: [UInt8]

    /// Creates a pattern.
    public init(start: UInt8 = 0, adType: UInt8, content: [UInt8]) {
        self.start = start
        self.adType = adType
        self.content = content
    }

    /// Service data (AD type 0x16) of a 16-bit UUID, whatever follows.
    public static func serviceData16(_ uuid: UInt16) -> AdvertisementMonitorPattern {
        AdvertisementMonitorPattern(adType: 0x16, content: [UInt8(uuid & 0xFF), UInt8(uuid >> 8)])
    }
}
