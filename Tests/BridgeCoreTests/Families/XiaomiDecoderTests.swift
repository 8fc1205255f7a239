import Testing

@testable import BridgeCore

/// The `xiaomi` family (MiBeacon on fe95). Captured frames and their expected values come from
/// xiaomi-ble's test suite (tests/test_parser.py); encrypted frames of our own are sealed here
/// with ``AESCCM`` and a known key.
@Suite struct XiaomiDecoderTests {
    static let fe95 = BluetoothUUID(uuid16: 0xFE95)

    static func bytes(_ hex: String) -> [UInt8] { (try? Hex.decode(hex.filter { $0 != " " })) ?? [] }

    static func decode(_ address: String, _ hex: String, key: String? = nil) -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        let frame = AdvertisementFrame(address: BluetoothAddress(address)!, serviceData: [fe95: bytes(hex)])
        return AdvertisementDecoder.decode(frame, bindkey: key.map { bytes($0) })
    }

    static func json(_ decoded: DecodedAdvertisement) -> String { JSONValue.object(decoded.values).jsonString }

    // MARK: Captured frames (xiaomi-ble tests)

    @Test func lywsdcgqPlaintextV2() throws {
        // test_Xiaomi_LYWSDCGQ: 0x100D temperature + humidity, 0x100A battery; MAC in the frame.
        let d = try #require(try Self.decode("58:2D:34:3B:2E:BF", "5020aa01a3bf2e3b342d580d1004b40095020a10013b")?.get())
        #expect(d.decoder == "xiaomi" && d.manufacturer == "Xiaomi" && d.model == "LYWSDCGQ")
        #expect(d.packetID == 0xA3 && !d.encrypted && d.counter == nil)
        #expect(Self.json(d) == #"{"temperature":18.0,"humidity":66.1,"battery":59}"#)
    }

    @Test func lywsd03mmcPlaintextAndEncrypted() throws {
        // test_Xiaomi_LYWSD03MMC: a plaintext v3 frame, MAC included; 0x100D: 27.2 °C, 49.0 %.
        let plain = try #require(try Self.decode("A4:C1:38:B4:94:4C", "50305b05034c94b438c1a40d10041001ea01")?.get())
        #expect(plain.model == "LYWSD03MMC" && Self.json(plain) == #"{"temperature":27.2,"humidity":49.0}"#)
        // test_Xiaomi_LYWSD03MMC_encrypted: v5, AES-CCM; humidity 46.7 % (0x1006, not floored).
        let frame = "58585b0550f4830238c1a495ef58763c26000097e2abb5"
        let key = "e9ea895fac7cca6d30532432a516f3a8"
        let d = try #require(try Self.decode("A4:C1:38:02:83:F4", frame, key: key)?.get())
        #expect(d.model == "LYWSD03MMC" && d.encrypted && d.packetID == 0x50)
        #expect(Self.json(d) == #"{"humidity":46.7}"#)
        #expect(d.counter == 0x0000_2650 && d.counterBits == 32)  // extended counter 000026 (LE), frame counter 0x50
        // Without a key, with the wrong key, with a 12-byte key.
        #expect(Self.decode("A4:C1:38:02:83:F4", frame) == .failure(.encryptedWithoutKey))
        #expect(Self.decode("A4:C1:38:02:83:F4", frame, key: "00112233445566778899aabbccddeeff") == .failure(.badMIC))
        #expect(Self.decode("A4:C1:38:02:83:F4", frame, key: "b853075158487ca39a5b5ea9") == .failure(.invalidKey(12)))
        // Another advertiser's address than the frame's MAC: refused before decryption.
        #expect(Self.decode("A4:C1:38:02:83:F5", frame, key: key) == .failure(.malformed(family: "xiaomi", reason: "the frame's MAC is not the advertiser's address")))
        // A bit flipped in the ciphertext.
        #expect(Self.decode("A4:C1:38:02:83:F4", "58585b0550f4830238c1a495ef58763d26000097e2abb5", key: key) == .failure(.badMIC))
    }

    @Test func encryptedSensorsOfOtherModels() throws {
        // test_Xiaomi_CGG1 (v5, humidity 59.6), test_Xiaomi_MJWSD06MMC_temperature (0x4C01
        // float, 25.2 °C), test_Xiaomi_MS1BB_MI_obj4a08 (motion with illuminance 228 lx).
        let cgg1 = try #require(
            try Self.decode("5A:58:2D:34:12:5F", "5858480b685f12342d585a0b1841e2aa000e00a4964fb5", key: "814aac74c4f17b6c1581e1ab87816b99")?.get())
        #expect(cgg1.model == "CGG1-ENCRYPTED" && Self.json(cgg1) == #"{"humidity":59.6}"#)
        #expect(cgg1.counter == 0x000E_0068)  // extended counter 000e00 (LE), frame counter 0x68
        let mjwsd = try #require(
            try Self.decode("A4:C1:38:80:15:07", "4859b5553a8699bda053448f1200005b046d6a", key: "4d8f1373fb4d3bab557d0ebd1c78f8c4")?.get())
        #expect(mjwsd.model == "MJWSD06MMC" && Self.json(mjwsd) == #"{"temperature":25.2}"#)
        let hs1 = try #require(
            try Self.decode("A4:C1:38:05:8E:E9", "4859eb2ac2fce02ca0b43af2380000a2d9f05f", key: "7475a4a77584401780ffc3ee62dd353c")?.get())
        #expect(hs1.model == "HS1BB(MI)" && Self.json(hs1) == #"{"motion":true,"illuminance":228.0}"#)
        // test_Xiaomi_MCCGQ02HL: a door sensor, 0x4804 open.
        let door = try #require(
            try Self.decode("E4:AA:EC:81:21:AE", "58588b09a3ae2181ecaae40e2c553c040000d28a500c", key: "017e52d2684779298709b117c0a75a7b")?.get())
        #expect(door.model == "MCCGQ02HL" && Self.json(door) == #"{"opening":true}"#)
    }

    @Test func miFloraPlaintextObjects() throws {
        // test_Xiaomi_HHCCJCY01_all_values: one object per frame, capability byte present.
        let a = "C4:7C:8D:6A:3E:7A"
        #expect(Self.json(try #require(try Self.decode(a, "71209800667a3e6a8d7cc40d071003000000")?.get())) == #"{"illuminance":0}"#)
        #expect(Self.json(try #require(try Self.decode(a, "71209800687a3e6a8d7cc40d0910025702")?.get())) == #"{"conductivity":599}"#)
        #expect(Self.json(try #require(try Self.decode(a, "71209800477a3e6a8d7cc40d08100140")?.get())) == #"{"moisture":64}"#)
        let t = try #require(try Self.decode(a, "71209800697a3e6a8d7cc40d041002f400")?.get())
        #expect(t.model == "HHCCJCY01" && t.packetID == 0x69 && Self.json(t) == #"{"temperature":24.4}"#)
    }

    @Test func otherCapturedFrames() throws {
        // test_Xiaomi_CGPR1: 0x000F motion with 100 lx.
        let cgpr1 = try #require(try Self.decode("A4:C1:38:0A:00:83", "5040830a0183000a38c1a40f0003640000")?.get())
        #expect(cgpr1.model == "CGPR1" && Self.json(cgpr1) == #"{"motion":true,"illuminance":100}"#)
        // test_Xiaomi_MMC_W505: body temperature 0x000A (34.45 °C); the one byte after the
        // object is ignored, as the device sends it.
        let w505 = try #require(try Self.decode("D0:24:18:53:AB:DB", "702291030fdbab531824d0090a0002750d07")?.get())
        #expect(w505.model == "MMC-W505" && Self.json(w505) == #"{"temperature":34.45}"#)
    }

    // MARK: Generated frames: edge values and the MiBeacon rules

    /// A plaintext v3 frame of `product` with the MAC of A4:C1:38:11:22:33 and `objects`.
    static func plain(_ product: String, _ objects: String, counter: String = "07") -> String {
        "5030" + product + counter + "332211 38c1a4" + objects
    }

    @Test func edgeValues() throws {
        let a = "A4:C1:38:11:22:33"
        func values(_ product: String, _ objects: String) throws -> String {
            Self.json(try #require(try Self.decode(a, Self.plain(product, objects))?.get()))
        }
        #expect(try values("aa01", "041002 7001") == #"{"temperature":36.8}"#)
        #expect(try values("aa01", "041002 83ff") == #"{"temperature":-12.5}"#)
        #expect(try values("aa01", "041002 ffff") == #"{"temperature":-0.1}"#)
        #expect(try values("aa01", "0d1004 29ff e803") == #"{"temperature":-21.5,"humidity":100.0}"#)
        #expect(try values("aa01", "0a1001 00") == #"{"battery":0}"#)
        #expect(try values("aa01", "0a1001 64") == #"{"battery":100}"#)
        #expect(try values("9800", "071003 ffffff") == #"{"illuminance":16777215}"#)
        #expect(try values("9800", "091002 ffff") == #"{"conductivity":65535}"#)
        #expect(try values("df02", "101002 d204") == #"{"formaldehyde":12.34}"#)  // JQJCY01YM
        #expect(try values("3228", "014c04 0000e8c0") == #"{"temperature":-7.25}"#)  // MJWSD05MMC float
        #expect(try values("3228", "024c01 37") == #"{"humidity":55}"#)
        #expect(try values("d603", "191001 00") == #"{"opening":true}"#)  // CGH1
        #expect(try values("d603", "191001 01") == #"{"opening":false}"#)
        #expect(try values("d603", "191001 02") == #"{"opening":true}"#)
        #expect(try values("8d0a", "014e01 01") == #"{"battery_low":true}"#)  // RTCGQ02LM
        // Two objects of one name: the second is numbered.
        #expect(try values("aa01", "041002 0a00 041002 1400") == #"{"temperature":1.0,"temperature_2":2.0}"#)
        // Values outside the format's range, and objects of the wrong length, are refused.
        #expect(Self.decode(a, Self.plain("aa01", "0a1001 65")) == .failure(.malformed(family: "xiaomi", reason: "battery 101 % (above 100)")))
        #expect(Self.decode(a, Self.plain("aa01", "041003 010203")) == .failure(.malformed(family: "xiaomi", reason: "object 0x1004 of 3 bytes")))
        #expect(Self.decode(a, Self.plain("3228", "014c04 0000c07f")) == .failure(.malformed(family: "xiaomi", reason: "temperature is not a number")))
    }

    @Test func framesWithoutReadingAreNotClaimed() {
        // test_blank_advertisements_then_encrypted: no object (a presence advertisement).
        #expect(Self.decode("A4:C1:38:D4:3C:48", "30585b0502483cd438c1a408") == nil)
        // Objects this family does not read (a button, 0x1001), the door reset (0x1019 = 3).
        #expect(Self.decode("A4:C1:38:11:22:33", Self.plain("aa01", "011003 000000")) == nil)
        #expect(Self.decode("A4:C1:38:11:22:33", Self.plain("d603", "191001 03")) == nil)
        // No fe95 service data at all.
        #expect(AdvertisementDecoder.decode(AdvertisementFrame(address: BluetoothAddress("A4:C1:38:11:22:33")!), bindkey: nil) == nil)
    }

    @Test func refusedFrames() {
        let a = "A4:C1:38:11:22:33"
        func reason(_ hex: String, key: String? = nil) -> String? {
            guard case .failure(let e)? = Self.decode(a, hex, key: key) else { return nil }
            return e.description
        }
        // test_Xiaomi_unknown_device_logs_product_id: product 0xffff.
        #expect(reason("5020ffffa3bf2e3b342d580d1004b40095020a10013b") == "not a valid xiaomi frame: unknown product id 65535")
        #expect(reason("d030aa0107332211 38c1a4 041002 0a00") == "not a valid xiaomi frame: mesh frames are not MiBeacon advertisements")
        #expect(reason("5010aa0107332211 38c1a4 041002 0a00") == "not a valid xiaomi frame: MiBeacon version 1 (expected 2 to 5)")
        #expect(reason("5060aa0107332211 38c1a4 041002 0a00") == "not a valid xiaomi frame: MiBeacon version 6 (expected 2 to 5)")
        #expect(reason("5030aa0107442211 38c1a4 041002 0a00") == "not a valid xiaomi frame: the frame's MAC is not the advertiser's address")
        #expect(reason("5030aa01") == "the frame ends inside MiBeacon header")
        #expect(reason("5030aa0107332211") == "the frame ends inside MAC address")
        #expect(reason(Self.plain("aa01", "041002 0a")) == "the frame ends inside MiBeacon object 0x1004")
        // A plaintext frame from a device that has a key: refused, as a downgrade.
        #expect(Self.decode(a, Self.plain("aa01", "041002 0a00"), key: "00112233445566778899aabbccddeeff") == .failure(.unencryptedWithKey))
        // A MAC-less frame is read with the advertiser's address.
        let noMAC = try? Self.decode(a, "4030aa0107 041002 0a00")?.get()
        #expect(noMAC.map(Self.json) == #"{"temperature":1.0}"#)
    }

    @Test func truncationsAndMutationsNeverTrap() {
        let frames: [(String, String, String?)] = [
            ("58:2D:34:3B:2E:BF", "5020aa01a3bf2e3b342d580d1004b40095020a10013b", nil),
            ("A4:C1:38:02:83:F4", "58585b0550f4830238c1a495ef58763c26000097e2abb5", "e9ea895fac7cca6d30532432a516f3a8"),
            ("F8:24:41:C5:98:8B", "5830b603d28b98c54124f8c3491476757e00000099", "b853075158487ca39a5b5ea9"),
            ("D0:24:18:53:AB:DB", "702291030fdbab531824d0090a0002750d07", nil),
        ]
        var rng = SplitMix64(seed: 26)
        for (address, hex, key) in frames {
            let full = Self.bytes(hex)
            let frame = { (data: [UInt8]) in
                AdvertisementFrame(address: BluetoothAddress(address)!, serviceData: [Self.fe95: data])
            }
            let whole = try? XiaomiDecoder.decode(frame(full), key: key.map { Self.bytes($0) })?.get().values.members
            for n in 0..<full.count {
                // Every prefix: refused or not claimed, or (cut after a whole object of a plaintext
                // frame) the values of the objects before the cut, never a value of a cut object.
                let r = XiaomiDecoder.decode(frame(Array(full[..<n])), key: key.map { Self.bytes($0) })
                if case .success(let d)? = r, d.values.members != Array((whole ?? []).prefix(d.values.count)) {
                    Issue.record("prefix \(n) of \(hex) decoded: \(d.values)")
                }
            }
            for _ in 0..<300 {
                var data = full
                let i = Int(rng.next() % UInt64(data.count))
                data[i] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8))
                _ = XiaomiDecoder.decode(frame(data), key: key.map { Self.bytes($0) })
                _ = XiaomiDecoder.decode(frame(data), key: nil)
            }
        }
        for _ in 0..<2000 {
            let count = Int(rng.next() % 40)
            var data = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            if count > 1, rng.next() % 2 == 0 { data[1] = 0x50 | (data[1] & 0x08) }  // mostly v5
            _ = XiaomiDecoder.decode(frame(data), key: Self.bytes("e9ea895fac7cca6d30532432a516f3a8"))
            _ = XiaomiDecoder.decode(frame(data), key: Self.bytes("b853075158487ca39a5b5ea9"))
            _ = XiaomiDecoder.decode(frame(data), key: nil)
        }
        func frame(_ data: [UInt8]) -> AdvertisementFrame {
            AdvertisementFrame(address: BluetoothAddress("A4:C1:38:11:22:33")!, serviceData: [Self.fe95: data])
        }
    }
}
