import BridgeBase
import Testing

@testable import BluezSimKit

/// The simulator's own BTHome v2 encoder and resolvable-private-address generator, against the published examples
/// (never against the bridge's decoders: the point of both is to test those). `scripts/check-sim` also decodes the
/// frames a running simulator sends with Home Assistant's `bthome-ble` and resolves its addresses with Python's
/// `cryptography`.
@Suite struct SimCodecTests {
    static func hex(_ text: String) -> [UInt8] { (try? Hex.decode(text)) ?? [] }

    // MARK: ah and resolvable private addresses (Bluetooth Core specification)

    /// Vol 3 Part H, Appendix D.7 (ah random address hash function sample data): IRK
    /// ec0234a357c8ad05341010a60a397d9b, prand 708194, hash 0dfbaa.
    @Test func ahMatchesTheCoreSpecificationSample() throws {
        let irk = try #require(PrivacyKey(hex: "ec0234a357c8ad05341010a60a397d9b"))
        #expect(irk.ah(0x70_8194) == 0x0D_FBAA)
        // The resolvable private address of that prand: prand in the upper half, the hash in the lower.
        #expect(irk.resolvablePrivateAddress(prand: 0x70_8194)?.description == "70:81:94:0D:FB:AA")
        #expect(irk.resolves(try #require(BluetoothAddress("70:81:94:0D:FB:AA"))))
        #expect(!irk.resolves(try #require(BluetoothAddress("70:81:94:0D:FB:AB"))))
        // The upper 8 bits of the argument are not part of prand.
        #expect(irk.ah(0xFF70_8194) == 0x0D_FBAA)
    }

    /// A second, independent worked example: EnOcean's PTM 215B / STM 550B user manuals (appendix "Address
    /// resolution example"): IRK BE759A027A4870FD242794F4C45220FB, address 49:39:70:E5:19:44.
    @Test func ahMatchesEnOceansWorkedExample() throws {
        let irk = try #require(PrivacyKey(hex: "BE759A027A4870FD242794F4C45220FB"))
        #expect(irk.ah(0x49_3970) == 0xE5_1944)
        #expect(irk.resolves(try #require(BluetoothAddress("49:39:70:E5:19:44"))))
        // Another key does not resolve it.
        let other = try #require(PrivacyKey(hex: "ec0234a357c8ad05341010a60a397d9b"))
        #expect(!other.resolves(try #require(BluetoothAddress("49:39:70:E5:19:44"))))
    }

    @Test func prandIsMarkedResolvableAndNeverAllZeroOrAllOne() {
        var random = SplitMix64(seed: 7)
        for _ in 0..<1000 {
            let prand = PrivacyKey.prand(random: UInt32(truncatingIfNeeded: random.next()))
            #expect(prand >> 22 == 0b01)
            #expect(prand & 0x3F_FFFF != 0 && prand & 0x3F_FFFF != 0x3F_FFFF)
        }
        #expect(PrivacyKey.prand(random: 0) == 0x40_0001)
        #expect(PrivacyKey.prand(random: 0xFFFF_FFFF) == 0x7F_FFFE)
        #expect(PrivacyKey.prand(random: 0x0012_3456) == 0x52_3456)
    }

    @Test func keysAreThirtyTwoHexDigits() {
        #expect(PrivacyKey(hex: "ec0234a357c8ad05341010a60a397d9b")?.bytes.first == 0xEC)
        #expect(PrivacyKey(hex: "ec0234a357c8ad05341010a60a397d") == nil)
        #expect(PrivacyKey(hex: "ec0234a357c8ad05341010a60a397d9b00") == nil)
        #expect(PrivacyKey(hex: "zz0234a357c8ad05341010a60a397d9b") == nil)
    }

    /// What the simulator advertises for a scenario key: the Core sample's key, a few periods.
    @Test func advertisedAddressesResolveWithTheirKey() throws {
        let irk = try #require(PrivacyKey(hex: "ec0234a357c8ad05341010a60a397d9b"))
        var spec = PeripheralSpec(address: "C0:FF:EE:00:00:01", addressType: "random")
        spec.irk = irk
        for slot in Int64(0)..<50 {
            let address = try #require(Simulator.privateAddress(spec, slot: slot).flatMap { BluetoothAddress($0) })
            #expect(address.value >> 46 == 0b01)
            let prand = UInt32(address.value >> 24)
            #expect(irk.ah(prand) == UInt32(address.value & 0xFF_FFFF))
        }
    }

    // MARK: BTHome v2 (bthome.io/format, bthome.io/encryption)

    /// bthome.io/format's object table examples: packet id `0009` (9), battery `0161` (97 %), temperature
    /// `02CA09` (25.06 °C), humidity `03BF13` (50.55 %), button `3A01` (press).
    @Test func objectsMatchTheFormatTable() throws {
        #expect(BTHomeV2Frame.Object.packetID(9) == .init(id: 0x00, value: [0x09]))
        #expect(BTHomeV2Frame.Object.battery(percent: 97) == .init(id: 0x01, value: [0x61]))
        #expect(BTHomeV2Frame.Object.temperature(celsius: 25.06) == .init(id: 0x02, value: [0xCA, 0x09]))
        #expect(BTHomeV2Frame.Object.humidity(percent: 50.55) == .init(id: 0x03, value: [0xBF, 0x13]))
        #expect(BTHomeV2Frame.Object.buttonPress() == .init(id: 0x3A, value: [0x01]))
        // sint16: below zero in two's complement (-5.5 °C = -550 = 0xFDDA); out of range: no object.
        #expect(BTHomeV2Frame.Object.temperature(celsius: -5.5)?.value == [0xDA, 0xFD])
        #expect(BTHomeV2Frame.Object.temperature(celsius: 400) == nil)
        #expect(BTHomeV2Frame.Object.humidity(percent: -1) == nil)
        // Halves of a step round away from zero.
        #expect(BTHomeV2Frame.Object.temperature(celsius: 23.125)?.value == [0x09, 0x09])  // 2313
        #expect(BTHomeV2Frame.Object.temperature(celsius: -23.125)?.value == [0xF7, 0xF6])  // -2313
    }

    /// bthome.io/format's example advertisement `0A16D2FC4002C40903BF13`: service data `40 02C409 03BF13`
    /// (not encrypted, regular updates, version 2; 25.00 °C, 50.55 %).
    @Test func plainFrameMatchesTheFormatExample() throws {
        let objects = [
            try #require(BTHomeV2Frame.Object.humidity(percent: 50.55)),
            try #require(BTHomeV2Frame.Object.temperature(celsius: 25.00)),
        ]
        // Given out of order: the frame sorts the objects by id.
        #expect(BTHomeV2Frame(objects: objects).plain == Self.hex("4002c40903bf13"))
        // Bit 2: a trigger-based device.
        #expect(BTHomeV2Frame(objects: objects, triggerBased: true).plain.first == 0x44)
    }

    /// bthome.io/encryption's worked example: `02CA09 03BF13` with key 231d39c1d7cc1ab1aee224cd096db932, MAC
    /// 5448E68F80A5 and the counter written `00112233` (nonce 5448e68f80a5d2fc4100112233) gives ciphertext
    /// a47266c95f73 and MIC 78237214: service data `41 a47266c95f73 00112233 78237214`.
    @Test func encryptedFrameMatchesTheEncryptionExample() throws {
        let frame = BTHomeV2Frame(objects: [
            try #require(BTHomeV2Frame.Object.temperature(celsius: 25.06)),
            try #require(BTHomeV2Frame.Object.humidity(percent: 50.55)),
        ])
        let key = Self.hex("231d39c1d7cc1ab1aee224cd096db932")
        let mac = Self.hex("5448E68F80A5")
        #expect(frame.encrypted(key: key, mac: mac, counter: 0x3322_1100) == Self.hex("41a47266c95f730011223378237214"))
        // Every input is part of the MIC: another counter, MAC or key gives another frame.
        #expect(frame.encrypted(key: key, mac: mac, counter: 0x3322_1101) != frame.encrypted(key: key, mac: mac, counter: 0x3322_1100))
        var otherMac = mac
        otherMac[5] ^= 1
        #expect(frame.encrypted(key: key, mac: otherMac, counter: 0x3322_1100)?.suffix(4) != Self.hex("78237214")[...])
        #expect(frame.encrypted(key: Array(key.reversed()), mac: mac, counter: 0x3322_1100)?.suffix(4) != Self.hex("78237214")[...])
        // Wrong sizes: no frame.
        #expect(frame.encrypted(key: Array(key.prefix(15)), mac: mac, counter: 1) == nil)
        #expect(frame.encrypted(key: key, mac: Array(mac.prefix(5)), counter: 1) == nil)
    }

    /// A scenario broadcaster's frame: the objects the walk gives for a packet, in id order.
    @Test func broadcastFramesCarryTheScenarioReadings() throws {
        let spec = BroadcastSpec(kind: .bthomeV2, buttonEvery: 4, temperature: 23.0, humidity: 40, battery: 100)
        // Packet 32: the middle of the walk (phase 0), a multiple of 4 (button).
        let frame = BroadcastFrames.frame(spec, packet: 32, address: "C0:FF:EE:00:00:01")
        #expect(frame.uuid == "0000fcd2-0000-1000-8000-00805f9b34fb")
        #expect(frame.bytes == Self.hex("40 0020 0164 02fc08 03a00f 3a01"))
        // Packet 33: phase 1/32 (23.015625 °C → 2302, 40.0625 % → 4006), no button.
        #expect(BroadcastFrames.frame(spec, packet: 33, address: "C0:FF:EE:00:00:01").bytes == Self.hex("40 0021 0164 02fe08 03a60f"))
        // With a bindkey the same objects are encrypted, the packet the counter.
        var sealed = spec
        sealed.bindkey = Self.hex("231d39c1d7cc1ab1aee224cd096db932")
        let encrypted = BroadcastFrames.frame(sealed, packet: 32, address: "C0:FF:EE:00:00:01").bytes
        #expect(encrypted.first == 0x41)
        #expect(encrypted.count == 1 + 12 + 4 + 4)
        #expect(Array(encrypted[13..<17]) == [32, 0, 0, 0])
    }
}
