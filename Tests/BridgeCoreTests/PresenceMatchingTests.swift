import Testing

@testable import BridgeCore

/// `ah`, the IRK resolver and its cache, iBeacon parsing and the tracker matcher (SPEC §12).
@Suite struct PresenceMatchingTests {
    /// Core specification Vol 3 Part H, Appendix D.7.
    static let sampleIRK = IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9b")!
    static let sampleRPA = BluetoothAddress("70:81:94:0D:FB:AA")!

    @Test func ahMatchesTheCoreSpecificationSampleData() throws {
        #expect(Self.sampleIRK.ah(0x708194) == 0x0DFBAA)
        #expect(Self.sampleIRK.resolves(Self.sampleRPA))
        // The key's bytes are used in the order written: reversed, it is another key.
        let reversed = try #require(IdentityResolvingKey(bytes: Self.sampleIRK.bytes.reversed()))
        #expect(reversed.ah(0x708194) != 0x0DFBAA)
        #expect(!reversed.resolves(Self.sampleRPA))
        // One bit off in the hash or prand.
        #expect(!Self.sampleIRK.resolves(BluetoothAddress("70:81:94:0D:FB:AB")!))
        #expect(!Self.sampleIRK.resolves(BluetoothAddress("70:81:95:0D:FB:AA")!))
    }

    @Test func onlyTopBits01AreResolvable() throws {
        #expect(IdentityResolvingKey.isResolvable(Self.sampleRPA))
        #expect(!IdentityResolvingKey.isResolvable(BluetoothAddress("F0:81:94:0D:FB:AA")!))  // 11: static random
        #expect(!IdentityResolvingKey.isResolvable(BluetoothAddress("30:81:94:0D:FB:AA")!))  // 00: non-resolvable
        #expect(!IdentityResolvingKey.isResolvable(BluetoothAddress("B0:81:94:0D:FB:AA")!))  // 10: reserved
        // Same low bits, the hash valid for prand 708194 but the top bits 11: not an RPA, not resolved.
        #expect(!Self.sampleIRK.resolves(BluetoothAddress("F0:81:94:0D:FB:AA")!))
    }

    @Test func generatedAddressesResolve() throws {
        for seed: UInt32 in [0, 1, 0x3F_FFFF, 0x12_3456, 0xFFFF_FFFF] {
            let address = try #require(Self.sampleIRK.resolvablePrivateAddress(random: seed))
            #expect(IdentityResolvingKey.isResolvable(address))
            #expect(Self.sampleIRK.resolves(address), "\(address)")
        }
        let other = try #require(IdentityResolvingKey(hex: "00112233445566778899aabbccddeeff"))
        #expect(!other.resolves(try #require(Self.sampleIRK.resolvablePrivateAddress(random: 7))))
    }

    @Test func keyParsingAndDescriptionHideTheKey() {
        #expect(IdentityResolvingKey(hex: "EC0234A357C8AD05341010A60A397D9B") == Self.sampleIRK)
        #expect(IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9") == nil)
        #expect(IdentityResolvingKey(hex: "ec0234a357c8ad05341010a60a397d9bzz") == nil)
        #expect(IdentityResolvingKey(hex: "xc0234a357c8ad05341010a60a397d9b") == nil)
        #expect(!"\(Self.sampleIRK)".contains("ec02"))
    }

    @Test func resolverCachesEveryAnswer() throws {
        let other = try #require(IdentityResolvingKey(hex: "00112233445566778899aabbccddeeff"))
        var resolver = IdentityResolver(keys: [other, Self.sampleIRK])
        #expect(resolver.resolve(Self.sampleRPA, isRandom: true) == 1)
        #expect(resolver.aesBlocks == 2)  // tried the first key, then the second
        for _ in 0..<100 { #expect(resolver.resolve(Self.sampleRPA, isRandom: true) == 1) }
        #expect(resolver.aesBlocks == 2)
        // A stranger's RPA: both keys once, then cached as "none".
        let stranger = BluetoothAddress("5A:00:00:11:22:33")!
        #expect(resolver.resolve(stranger, isRandom: true) == nil)
        #expect(resolver.resolve(stranger, isRandom: true) == nil)
        #expect(resolver.aesBlocks == 4)
        // Public addresses and non-resolvable random ones cost nothing and are not cached.
        #expect(resolver.resolve(Self.sampleRPA, isRandom: false) == nil)
        #expect(resolver.resolve(BluetoothAddress("F0:00:00:11:22:33")!, isRandom: true) == nil)
        #expect(resolver.aesBlocks == 4)
        #expect(resolver.cache.count == 2)
    }

    @Test func resolverCacheIsBoundedOldestFirst() throws {
        var resolver = IdentityResolver(keys: [Self.sampleIRK], capacity: 3)
        let addresses = (0..<4).map { BluetoothAddress(value: 0x4000_0000_0000 | UInt64($0)) }
        for address in addresses { _ = resolver.resolve(address, isRandom: true) }
        #expect(resolver.cache.count == 3)
        #expect(resolver.cache[addresses[0]] == nil)  // the oldest went
        #expect(resolver.aesBlocks == 4)
        _ = resolver.resolve(addresses[3], isRandom: true)
        #expect(resolver.aesBlocks == 4)  // still cached
        _ = resolver.resolve(addresses[0], isRandom: true)
        #expect(resolver.aesBlocks == 5)  // forgotten: resolved again
        #expect(resolver.cache[addresses[1]] == nil)
    }

    static let beaconBytes: [UInt8] = [
        0x02, 0x15, 0xFD, 0xA5, 0x06, 0x93, 0xA4, 0xE2, 0x4F, 0xB1, 0xAF, 0xCF, 0xC6, 0xEB, 0x07, 0x64, 0x78, 0x25,
        0x27, 0x11, 0x00, 0x02, 0xC5,
    ]

    @Test func iBeaconParsing() throws {
        let beacon = try #require(IBeacon(manufacturerData: Self.beaconBytes))
        #expect(beacon.identity.uuid == BluetoothUUID("fda50693-a4e2-4fb1-afcf-c6eb07647825"))
        #expect(beacon.identity.major == 10001)
        #expect(beacon.identity.minor == 2)
        #expect(beacon.measuredPower == -59)
        #expect(beacon.manufacturerData == Self.beaconBytes)
        #expect(beacon.identity.description == "fda50693-a4e2-4fb1-afcf-c6eb07647825:10001:2")
        #expect(IBeacon(manufacturerData: [0x004C: Self.beaconBytes]) == beacon)
        #expect(IBeacon(manufacturerData: [0x0059: Self.beaconBytes]) == nil)  // not Apple's
        #expect(IBeacon(manufacturerData: Self.beaconBytes + [0x00]) == beacon)  // a trailing byte
        #expect(IBeacon(manufacturerData: Array(Self.beaconBytes.dropLast())) == nil)  // short
        var wrongType = Self.beaconBytes
        wrongType[0] = 0x10  // Apple's "nearby" frames
        #expect(IBeacon(manufacturerData: wrongType) == nil)
        var wrongLength = Self.beaconBytes
        wrongLength[1] = 0x14
        #expect(IBeacon(manufacturerData: wrongLength) == nil)
    }

    @Test func iBeaconIdentityParsing() {
        let uuid = BluetoothUUID("fda50693-a4e2-4fb1-afcf-c6eb07647825")!
        #expect(IBeacon.Identity("fda50693-a4e2-4fb1-afcf-c6eb07647825:10001:2") == .init(uuid: uuid, major: 10001, minor: 2))
        #expect(IBeacon.Identity("FDA50693A4E24FB1AFCFC6EB07647825:0:65535") == .init(uuid: uuid, major: 0, minor: 65535))
        for bad in [
            "fda50693-a4e2-4fb1-afcf-c6eb07647825:1", "fda50693-a4e2-4fb1-afcf-c6eb07647825:1:65536",
            "fda50693-a4e2-4fb1-afcf-c6eb07647825:-1:2", "fda50693-a4e2-4fb1-afcf-c6eb07647825::2", "180d:1:2",
            "0000180d:1:2", "fda50693-a4e2-4fb1-afcf-c6eb07647825:1:2:3", "fda50693-a4e2-4fb1-afcf-c6eb0764782:1:2",
            "fda50693-a4e2-4fb1-afcf-c6eb07647825:0x1:2",
        ] {
            #expect(IBeacon.Identity(bad) == nil, "\(bad)")
        }
    }

    @Test func matcherMatchesOnlyConfiguredTrackers() throws {
        let beacon = try #require(IBeacon(manufacturerData: Self.beaconBytes))
        let tag = BluetoothAddress("C0:FF:EE:00:00:09")!
        var matcher = TrackerMatcher(trackers: [
            .init(name: "alice_phone", match: .irk(Self.sampleIRK)),
            .init(name: "keys", match: .iBeacon(beacon.identity)),
            .init(name: "tag", match: .address(tag)),
        ])
        #expect(matcher.match(address: Self.sampleRPA, isRandom: true, manufacturerData: [:]) == ["alice_phone"])
        // The same bytes reported as a public address: not an RPA.
        #expect(matcher.match(address: Self.sampleRPA, isRandom: false, manufacturerData: [:]) == [])
        let next = try #require(Self.sampleIRK.resolvablePrivateAddress(random: 0x1234))
        #expect(matcher.match(address: next, isRandom: true, manufacturerData: [:]) == ["alice_phone"])
        // A beacon from any address.
        #expect(
            matcher.match(address: BluetoothAddress("11:22:33:44:55:66")!, isRandom: false, manufacturerData: [0x004C: Self.beaconBytes])
                == ["keys"])
        var otherMinor = Self.beaconBytes
        otherMinor[21] = 3
        #expect(matcher.match(address: BluetoothAddress("11:22:33:44:55:66")!, isRandom: false, manufacturerData: [0x004C: otherMinor]) == [])
        #expect(matcher.match(address: tag, isRandom: false, manufacturerData: [:]) == ["tag"])
        // Passers-by: a random stranger, a public stranger, Apple's other frames.
        #expect(matcher.match(address: BluetoothAddress("5A:00:00:11:22:33")!, isRandom: true, manufacturerData: [0x004C: [0x10, 0x05, 0x01]]) == [])
        #expect(matcher.match(address: BluetoothAddress("00:1A:7D:DA:71:13")!, isRandom: false, manufacturerData: [:]) == [])
        // The phone's address also carrying the beacon: both trackers.
        #expect(matcher.match(address: Self.sampleRPA, isRandom: true, manufacturerData: [0x004C: Self.beaconBytes]) == ["keys", "alice_phone"])
        // Resolution is cached: the phone's two addresses and the stranger cost one block each (one key).
        #expect(matcher.resolver.aesBlocks == 3)
    }
}
