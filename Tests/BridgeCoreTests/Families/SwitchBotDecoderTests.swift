import Testing

@testable import BridgeCore

/// SwitchBot (service data fd3d / 0d00, manufacturer data 0x0969): frames of PySwitchbot's and
/// theengs/decoder's test suites with their expected readings, edges, truncations, foreign frames.
@Suite struct SwitchBotDecoderTests {
    static func frame(_ sd: String, md: String? = nil, uuid: UInt16 = 0xFD3D) -> AdvertisementFrame {
        MakerFrames.frame(sd: [uuid: sd], md: md.map { [0x0969: $0] } ?? [:])
    }

    static func decoded(_ frame: AdvertisementFrame) throws -> DecodedAdvertisement {
        try #require(try MakerFrames.decode(frame)?.get())
    }

    @Test func meterFromServiceDataAndManufacturerData() throws {
        // PySwitchbot test_wosensor_passive_and_active / test_wosensor_active: 24.6 °C, 53 %, 100 %.
        for frame in [Self.frame("5400e4069835", md: "d7c17d5deb43de03069835"), Self.frame("5400e4069835")] {
            let meter = try Self.decoded(frame)
            #expect(meter.decoder == "switchbot" && meter.manufacturer == "SwitchBot" && meter.model == "Meter")
            #expect(meter.packetID == nil && !meter.encrypted && meter.counter == nil)
            #expect(JSONValue.object(meter.values).jsonString == #"{"temperature":24.6,"humidity":53,"battery":100}"#)
        }
        // theengs: Meter on the older UUID 0d00, 25.5 °C 56 % 84 %; Meter Plus below zero, -25.3 °C.
        #expect(MakerFrames.values(Self.frame("540054459938", uuid: 0x0D00)) == #"{"temperature":25.5,"humidity":56,"battery":84}"#)
        let plus = try Self.decoded(Self.frame("6900ba031938"))
        #expect(plus.model == "Meter Plus")
        #expect(JSONValue.object(plus.values).jsonString == #"{"temperature":-25.3,"humidity":56,"battery":58}"#)
        // The encryption flag (bit 7 of the type byte) and the Fahrenheit display bit change nothing.
        #expect(MakerFrames.values(Self.frame("d400e40698b5")) == #"{"temperature":24.6,"humidity":53,"battery":100}"#)
    }

    @Test func outdoorMeterReadsTheManufacturerData() throws {
        // PySwitchbot test_woiosensor_passive_and_active; theengs' Outdoor Meter frames.
        let outdoor = try Self.decoded(Self.frame("7700e4", md: "aabbccddeeffe00f06983500"))
        #expect(outdoor.model == "Outdoor Meter")
        #expect(JSONValue.object(outdoor.values).jsonString == #"{"temperature":24.6,"humidity":53,"battery":100}"#)
        #expect(
            MakerFrames.values(Self.frame("770041", md: "aabbccddeeffe30f090f2a00"))
                == #"{"temperature":-15.9,"humidity":42,"battery":65}"#)
        // Without its manufacturer data the Outdoor Meter's service data has no reading.
        #expect(MakerFrames.decode(Self.frame("770041")) == .failure(.truncated("Outdoor Meter temperature and humidity")))
    }

    @Test func edgesAndRanges() {
        #expect(MakerFrames.values(Self.frame("540000 0980 e4")) == #"{"temperature":0.9,"humidity":100,"battery":0}"#)
        #expect(MakerFrames.values(Self.frame("545e64 09ff 01")) == #"{"temperature":127.9,"humidity":1,"battery":100}"#)
        #expect(MakerFrames.values(Self.frame("540032 097f 00")) == #"{"temperature":-127.9,"humidity":0,"battery":50}"#)
        // No reading yet (PySwitchbot test_wosensor_active_zero_data), tenths above 9, humidity or
        // battery above 100: malformed.
        for bad in ["540000000000", "54006 40a 9935".filter { $0 != " " }, "540064069865", "540065069835"] {
            #expect(MakerFrames.values(Self.frame(bad)) == "failure: malformed", "\(bad)")
        }
    }

    @Test func contactSensor() throws {
        // PySwitchbot test_parse_advertisement_data_contact: the manufacturer data is too short
        // (11 bytes), the service data gives open (left open), motion, light.
        let contact = try Self.decoded(Self.frame("64406405007500f812", md: "e7ab46ac8f927c0f001104"))
        #expect(contact.model == "Contact Sensor")
        #expect(JSONValue.object(contact.values).jsonString == #"{"opening":true,"motion":true,"light":true,"battery":100}"#)
        // test_contact_sensor_mfr (open by timeout), test_contact_sensor_closed: the newer byte 7.
        #expect(
            MakerFrames.values(Self.frame("6400da040046018fc4", md: "cb39cdc43d46412c0046018fc4"))
                == #"{"opening":true,"motion":false,"light":false,"battery":90}"#)
        #expect(
            MakerFrames.values(Self.frame("6440da00002b001984", md: "cb39cdc43d46898c002b001984"))
                == #"{"opening":false,"motion":true,"light":false,"battery":90}"#)
        // theengs: service data only, on 0d00: closed, motion, bright.
        #expect(
            MakerFrames.values(Self.frame("64c05c010000000000", uuid: 0x0D00))
                == #"{"opening":false,"motion":true,"light":true,"battery":92}"#)
        #expect(MakerFrames.decode(Self.frame("64c05c0100")) == .failure(.truncated("Contact Sensor state")))
    }

    @Test func motionSensor() throws {
        let motion = try Self.decoded(Self.frame("7340e2002c02", md: "c0219ae8bc49766c002c"))
        #expect(motion.model == "Motion Sensor")
        #expect(JSONValue.object(motion.values).jsonString == #"{"motion":true,"light":true,"battery":98}"#)
        #expect(
            MakerFrames.values(Self.frame("7300e2006601", md: "c0219ae8bc496a1c0066"))
                == #"{"motion":false,"light":false,"battery":98}"#)
        // theengs, service data only: no motion, dark, 55 %.
        #expect(MakerFrames.values(Self.frame("73b037000045", uuid: 0x0D00)) == #"{"motion":false,"light":false,"battery":55}"#)
        #expect(MakerFrames.decode(Self.frame("7340e200")) == .failure(.truncated("Motion Sensor state")))
    }

    @Test func foreignAndUnknownFramesAreNotClaimed() {
        // Manufacturer data alone (no device type yet), a Bot, a Curtain, empty service data,
        // another UUID: not SwitchBot sensor frames.
        #expect(MakerFrames.decode(MakerFrames.frame(md: [0x0969: "d7c17d5deb43de03069835"])) == nil)
        #expect(MakerFrames.decode(Self.frame("48d0db", uuid: 0x0D00)) == nil)
        #expect(MakerFrames.decode(Self.frame("63c04c1970")) == nil)
        #expect(MakerFrames.decode(Self.frame("")) == nil)
        #expect(MakerFrames.decode(Self.frame("5400e4069835", uuid: 0xFE95)) == nil)
    }

    @Test func mutationsNeverTrapNorLeaveTheFamily() {
        for frame in [
            Self.frame("5400e4069835", md: "d7c17d5deb43de03069835"), Self.frame("7700e4", md: "aabbccddeeffe00f06983500"),
            Self.frame("64406405007500f812", md: "cb39cdc43d46412c0046018fc4"), Self.frame("7340e2002c02", md: "c0219ae8bc49766c002c"),
        ] {
            #expect(MakerFrames.claimants(ofMutationsOf: frame).isSubset(of: ["switchbot", "failure", "nil"]))
        }
    }
}
