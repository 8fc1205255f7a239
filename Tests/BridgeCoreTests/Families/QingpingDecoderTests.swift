import Testing

@testable import BridgeCore

/// The `qingping` family (service data fdcd). Captured frames and their expected values come
/// from qingping-ble's test suite (tests/test_parser.py).
@Suite struct QingpingDecoderTests {
    static let fdcd = BluetoothUUID(uuid16: 0xFDCD)

    static func decode(_ hex: String, address: String = "58:2D:34:11:22:33") -> Result<DecodedAdvertisement, AdvertisementDecodeError>? {
        let frame = AdvertisementFrame(address: BluetoothAddress(address)!, serviceData: [fdcd: XiaomiDecoderTests.bytes(hex)])
        return AdvertisementDecoder.decode(frame, bindkey: nil)
    }

    static func values(_ hex: String) throws -> String {
        XiaomiDecoderTests.json(try #require(try decode(hex)?.get()))
    }

    @Test func capturedFrames() throws {
        let cgg1 = try #require(try Self.decode("0816a72514342d580104d800bb01020164")?.get())
        #expect(cgg1.decoder == "qingping" && cgg1.manufacturer == "Qingping" && cgg1.model == "CGG1")
        #expect(cgg1.packetID == nil && !cgg1.encrypted)
        #expect(XiaomiDecoderTests.json(cgg1) == #"{"temperature":21.6,"humidity":44.3,"battery":100}"#)
        // CGP23W with pressure (1009.9 hPa), CGP22C with CO2, CGDN1 with PM and CO2.
        #expect(try Self.values("8818072240342d5801041801cd0002016107027327") == #"{"temperature":28.0,"humidity":20.5,"battery":97,"pressure":1009.9}"#)
        #expect(try Self.values("88336f6c82342d580104ee003d0102015d13028f02") == #"{"temperature":23.8,"humidity":31.7,"battery":93,"co2":655}"#)
        #expect(try Self.values("880ed6888fe6485401040301160212040200020013022502") == #"{"temperature":25.9,"humidity":53.4,"pm2_5":2,"pm10":2,"co2":549}"#)
        // CGH1 closed, with its packet id (0x0F record).
        let door = try #require(try Self.decode("c8044d3a40342d580401010f01ef")?.get())
        #expect(door.model == "CGH1" && door.packetID == 0xEF && XiaomiDecoderTests.json(door) == #"{"opening":false}"#)
        // CGPR1: battery with illuminance (0x09: 316 lx); event frames (flags bit 6) carry motion only.
        #expect(try Self.values("0812cdd560342d580201640f019809043c010000") == #"{"battery":100,"illuminance":316}"#)
        #expect(try Self.values("4812cdd560342d58080401e800000f017b") == #"{"motion":true}"#)
        #expect(try Self.values("4812cdd560342d580804000d00000f01ee") == #"{"motion":false}"#)
    }

    @Test func generatedFrames() throws {
        let mac = "332211342d58"
        #expect(try Self.values("8816" + mac + "0104 6cfe e703 020164") == #"{"temperature":-40.4,"humidity":99.9,"battery":100}"#)
        #expect(try Self.values("8816" + mac + "0104 ffff e803") == #"{"temperature":-0.1,"humidity":100.0}"#)
        #expect(try Self.values("0809" + mac + "0104 ccff 2103 0702 9427 020105") == #"{"temperature":-5.2,"humidity":80.1,"pressure":1013.2,"battery":5}"#)
        #expect(try Self.values("c804" + mac + "040100") == #"{"opening":true}"#)
        #expect(try Self.values("c804" + mac + "040102") == #"{"opening":true}"#)  // open too long
        #expect(try Self.values("0812" + mac + "0804 01341201") == #"{"motion":true,"illuminance":70196}"#)
        #expect(try Self.values("4812" + mac + "0804 01341201") == #"{"motion":true}"#)
        // 0x09 is 4 bytes: sunlight above 65535 lx (TheengsDecoder reads only 16 bits of it).
        #expect(try Self.values("0812" + mac + "020132 0f0107 0904 a0860100") == #"{"battery":50,"illuminance":100000}"#)
        // Externally powered (battery 0xFF): no battery value.
        #expect(try Self.values("885d" + mac + "0104 e600 9001 0201ff 1302 9c01") == #"{"temperature":23.0,"humidity":40.0,"co2":412}"#)
        // Unknown records are skipped by their length.
        #expect(try Self.values("0801" + mac + "5503 010203 0104 6400 f401") == #"{"temperature":10.0,"humidity":50.0}"#)
    }

    @Test func refusedAndUnclaimedFrames() {
        let mac = "332211342d58"
        func reason(_ hex: String) -> String? {
            guard case .failure(let e)? = Self.decode(hex) else { return nil }
            return e.description
        }
        // qingping-ble's NO_VALID_DATA: a MiBeacon frame in fdcd (device type 0x58 unknown).
        #expect(reason("3058830a02cdd560342d5808") == "not a valid qingping frame: unknown device type 88")
        #expect(reason("0816a72514") == "the frame ends inside Qingping header")
        #expect(reason("0816" + mac + "0104 d800bb") == "the frame ends inside Qingping record 1")
        #expect(reason("0816" + mac + "0104 d800bb01 02") == "the frame ends inside Qingping record header")
        #expect(reason("0816" + mac + "0103 d800bb") == "not a valid qingping frame: record 1 of 3 bytes")
        #expect(reason("0816" + mac + "020165") == "not a valid qingping frame: battery 101 % (above 100)")
        #expect(reason("0804" + mac + "040103") == "not a valid qingping frame: door state 3")
        // No reading: only a packet id, or nothing after the header.
        #expect(Self.decode("0816" + mac + "0f0101") == nil)
        #expect(Self.decode("0816" + mac) == nil)
        // Not fdcd: not claimed.
        let frame = AdvertisementFrame(address: BluetoothAddress("58:2D:34:11:22:33")!, serviceData: [BluetoothUUID(uuid16: 0xFE95): [0x08, 0x16]])
        #expect(QingpingDecoder.decode(frame, key: nil) == nil)
    }

    @Test func truncationsAndMutationsNeverTrap() {
        let full = XiaomiDecoderTests.bytes("880ed6888fe6485401040301160212040200020013022502")
        func frame(_ data: [UInt8]) -> AdvertisementFrame {
            AdvertisementFrame(address: BluetoothAddress("58:2D:34:11:22:33")!, serviceData: [Self.fdcd: data])
        }
        for n in 0..<full.count {
            if case .success(let d)? = QingpingDecoder.decode(frame(Array(full[..<n])), key: nil), n < 10 {
                Issue.record("prefix \(n) decoded: \(d.values)")
            }
        }
        var rng = SplitMix64(seed: 13)
        for _ in 0..<3000 {
            var data = full
            data[Int(rng.next() % UInt64(data.count))] ^= UInt8(truncatingIfNeeded: 1 << (rng.next() % 8))
            if rng.next() % 3 == 0 { data = Array(data[..<Int(rng.next() % UInt64(data.count))]) }
            _ = QingpingDecoder.decode(frame(data), key: nil)
            let count = Int(rng.next() % 32)
            _ = QingpingDecoder.decode(frame((0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }), key: nil)
        }
    }
}
