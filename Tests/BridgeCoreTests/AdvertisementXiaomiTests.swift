import Testing

@testable import BridgeCore

/// The pvvx and ATC1441 formats (service data 181a), which frames the dispatcher claims, and
/// random garbage and mutations through every decoder: no input may trap.
@Suite struct AdvertisementXiaomiTests {
    static let address = BluetoothAddress("A4:C1:38:8D:18:B2")!
    static let environmental = BluetoothUUID(uuid16: 0x181A)
    static let bthome = BluetoothUUID(uuid16: 0xFCD2)

    static func bytes(_ hex: String) -> [UInt8] {
        (try? Hex.decode(hex)) ?? []
    }

    static func decode(_ serviceData: [BluetoothUUID: [UInt8]], bindkey: [UInt8]? = nil)
        -> Result<DecodedAdvertisement, AdvertisementDecodeError>?
    {
        AdvertisementDecoder.decode(
            AdvertisementFrame(address: address, serviceData: serviceData, manufacturerData: [:]), bindkey: bindkey)
    }

    @Test func pvvxCustomFormat() throws {
        // MAC reversed, 21.50 °C, 45.12 %, 2950 mV, 91 %, counter 17, flags 0x04
        // (Theengs Decoder reads the same frame as tempc 21.5, hum 45.12, batt 91, volt 2.95).
        let decoded = try #require(try Self.decode([Self.environmental: Self.bytes("b2188d38c1a4 6608 a011 860b 5b 11 04")])?.get())
        #expect(decoded.decoder == "pvvx")
        #expect(decoded.packetID == 17)
        #expect(!decoded.encrypted && decoded.counter == nil && !decoded.triggerBased)
        #expect(
            JSONValue.object(decoded.values).jsonString == #"{"temperature":21.5,"humidity":45.12,"battery":91,"voltage":2.95}"#)
        // Below zero, full battery, the largest counter.
        let cold = try #require(try Self.decode([Self.environmental: Self.bytes("b2188d38c1a4 f3fd 1027 e40c 64 ff 00")])?.get())
        #expect(cold.packetID == 255)
        #expect(
            JSONValue.object(cold.values).jsonString == #"{"temperature":-5.25,"humidity":100.0,"battery":100,"voltage":3.3}"#)
    }

    @Test func atc1441Format() throws {
        // MAC as written, 21.5 °C (00d7, big endian), 45 %, 91 %, 2950 mV (0b86, big endian), counter 17.
        let decoded = try #require(try Self.decode([Self.environmental: Self.bytes("a4c1388d18b2 00d7 2d 5b 0b86 11")])?.get())
        #expect(decoded.decoder == "atc1441")
        #expect(decoded.packetID == 17)
        #expect(
            JSONValue.object(decoded.values).jsonString == #"{"temperature":21.5,"humidity":45,"battery":91,"voltage":2.95}"#)
        let cold = try #require(try Self.decode([Self.environmental: Self.bytes("a4c1388d18b2 fffb 5a 05 0a28 00")])?.get())
        #expect(cold.packetID == 0)
        #expect(JSONValue.object(cold.values).jsonString == #"{"temperature":-0.5,"humidity":90,"battery":5,"voltage":2.6}"#)
    }

    @Test func otherLengthsAreRejected() {
        for length in [0, 1, 8, 11, 12, 14, 16, 20] {
            #expect(
                Self.decode([Self.environmental: [UInt8](repeating: 0x5A, count: length)])
                    == .failure(.unexpectedLength(uuid: "181a", length: length)), "\(length) bytes")
        }
    }

    @Test func dispatcher() throws {
        // No decoder for other service data, manufacturer data no family claims (Apple's: 0x0499 is
        // Ruuvi's now), or nothing at all.
        #expect(Self.decode([BluetoothUUID(uuid16: 0x180D): [1, 2, 3]]) == nil)
        #expect(Self.decode([:]) == nil)
        #expect(
            AdvertisementDecoder.decode(
                AdvertisementFrame(address: Self.address, serviceData: [:], manufacturerData: [0x004C: [5, 1, 2]]), bindkey: nil)
                == nil)
        #expect(Self.decode([BluetoothUUID("0000fcd2-0000-1000-8000-00805f9b34fc")!: [0x40, 0x01, 0x61]]) == nil)
        // BTHome wins over 181a when a device sends both.
        let both = try #require(
            try Self.decode([Self.environmental: Self.bytes("a4c1388d18b200d72d5b0b8611"), Self.bthome: [0x40, 0x01, 0x61]])?.get())
        #expect(both.decoder == "bthome_v2")
        // A bindkey does not matter to the 181a formats (their encrypted variants are not supported).
        #expect(try Self.decode([Self.environmental: Self.bytes("a4c1388d18b200d72d5b0b8611")], bindkey: [UInt8](repeating: 1, count: 16))?.get().decoder == "atc1441")
    }

    /// Random bytes, valid frames with random mutations, random keys: every decoder returns a
    /// result or an error, never traps, and every success writes as JSON that parses back.
    @Test(arguments: [1, 2, 3, 0xADE5] as [UInt64])
    func garbageNeverTraps(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let key = Self.bytes("231d39c1d7cc1ab1aee224cd096db932")
        let valid: [(BluetoothUUID, [UInt8])] = [
            (Self.bthome, Self.bytes("40 0011 015B 026608 03A011 3A01 3C0103 530348692E 3B01030A")),
            (Self.bthome, Self.bytes("41a47266c95f730011223378237214")),
            (Self.bthome, Self.bytes("42 B2188D38C1A4 0161 F100010204")),
            (Self.environmental, Self.bytes("b2188d38c1a46608a011860b5b1104")),
            (Self.environmental, Self.bytes("a4c1388d18b200d72d5b0b8611")),
        ]
        var successes = 0
        for round in 0..<4000 {
            var uuid = round % 2 == 0 ? Self.bthome : Self.environmental
            var data: [UInt8]
            if round % 3 == 0 {
                data = (0..<Int(random.next() % 40)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            } else {
                let pick = valid[Int(random.next() % UInt64(valid.count))]
                uuid = pick.0
                data = pick.1
                for _ in 0..<(1 + Int(random.next() % 3)) {
                    switch random.next() % 4 {
                    case 0 where !data.isEmpty:
                        data[Int(random.next() % UInt64(data.count))] ^= UInt8(truncatingIfNeeded: 1 << (random.next() % 8))
                    case 1 where !data.isEmpty:
                        data.removeLast(Int(random.next() % UInt64(data.count)))
                    case 2:
                        data.insert(UInt8(truncatingIfNeeded: random.next()), at: Int(random.next() % UInt64(data.count + 1)))
                    case 3 where !data.isEmpty:
                        data[0] = 0x40 | UInt8(truncatingIfNeeded: random.next() & 0x07)
                    default:
                        break
                    }
                }
            }
            let bindkey: [UInt8]? =
                switch random.next() % 4 {
                case 0: key
                case 1: (0..<Int(random.next() % 20)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
                default: nil
                }
            guard let result = Self.decode([uuid: data], bindkey: bindkey) else {
                Issue.record("a claimed UUID was not decoded")
                continue
            }
            switch result {
            case .success(let decoded):
                successes += 1
                let text = JSONValue.object(decoded.values).jsonBytes
                #expect(try JSONParser.parse(text) == .object(decoded.values))
                if decoded.encrypted { #expect(decoded.counter != nil) }
            case .failure(let error):
                #expect(!error.code.isEmpty)
            }
        }
        #expect(successes > 100)
    }
}
