import Testing

@testable import BridgeCore

/// The dispatcher names the decoder that claimed a frame, and `scan`'s summary says what it
/// heard: family, model and values, or that a bindkey is needed.
@Suite struct AdvertisementClaimTests {
    static let address = BluetoothAddress("A4:C1:38:00:00:05")!

    /// Company `0xBEEF`: `01 hh` humidity (model `M1`), `02`: encrypted, `03`: malformed.
    enum Beef: AdvertisementFamily {
        static let name = "beef"
        static func decode(_ frame: AdvertisementFrame, key: [UInt8]?) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
            guard let data = frame.manufacturerData[0xBEEF], let type = data.first else { return nil }
            switch type {
            case 0x01 where data.count == 2:
                return .success(DecodedAdvertisement(
                    decoder: name, values: ["humidity": .integer(Int64(data[1]))], manufacturer: "Beef", model: "M1"))
            case 0x02 where key == nil:
                return .failure(.encryptedWithoutKey)
            default:
                return .failure(.malformed(family: name, reason: "type \(type)"))
            }
        }
    }

    static func claim(_ data: [UInt8], key: [UInt8]? = nil) -> AdvertisementClaim? {
        AdvertisementDecoder.claim(
            AdvertisementFrame(address: address, manufacturerData: [0xBEEF: data]), bindkey: key, families: [Beef.self])
    }

    @Test func familySummaries() {
        #expect(Self.claim([0x01, 45])?.decoder == "beef")
        #expect(Self.claim([0x01, 45])?.summary == "beef M1 humidity=45")
        #expect(Self.claim([0x02])?.needsKey == true)
        #expect(Self.claim([0x02])?.summary == "beef encrypted (needs a bindkey)")
        #expect(Self.claim([0x03])?.decoder == "beef")
        #expect(Self.claim([0x03])?.summary == nil, "malformed: nothing to say")
        #expect(AdvertisementDecoder.claim(
            AdvertisementFrame(address: Self.address, manufacturerData: [0x004C: [0x02, 0x15]]), bindkey: nil,
            families: [Beef.self]) == nil)
    }

    @Test func openFormatsAreNamedToo() {
        let bthome = AdvertisementFrame(
            address: Self.address, serviceData: [BluetoothUUID(uuid16: 0xFCD2): [0x40, 0x00, 0x11, 0x01, 0x5B]])
        #expect(AdvertisementDecoder.claim(bthome, bindkey: nil)?.summary == "bthome_v2 #17 battery=91")
        let encrypted = AdvertisementFrame(
            address: Self.address, serviceData: [BluetoothUUID(uuid16: 0xFCD2): [0x41, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]])
        let claim = AdvertisementDecoder.claim(encrypted, bindkey: nil)
        #expect(claim?.decoder == "bthome_v2" && claim?.needsKey == true)
        #expect(claim?.summary == "bthome_v2 encrypted (needs a bindkey)")
        let short = AdvertisementFrame(address: Self.address, serviceData: [BluetoothUUID(uuid16: 0x181A): [1, 2, 3]])
        #expect(AdvertisementDecoder.claim(short, bindkey: nil)?.decoder == "pvvx")
    }
}
