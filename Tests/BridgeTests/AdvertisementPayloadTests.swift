import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// The advertisement payload is written straight into bytes (the hot path); these cases hold it
/// to the JSON tree it replaced, byte for byte, and to SPEC §7's field order.
@Suite struct AdvertisementPayloadTests {
    static let address = BluetoothAddress("A4:C1:38:00:00:05")!

    /// The payload as the JSON tree built it before (SPEC §7's order: rssi, decoder, packet_id,
    /// values, service_data, manufacturer_data; entries sorted).
    static func reference(_ ad: BlueZAdvertisement, _ decoded: DecodedAdvertisement?, lockedBy: String? = nil) -> [UInt8] {
        var json = JSONObject()
        json.append("rssi", ad.rssi.flatMap { $0 == 127 ? nil : .integer(Int64($0)) } ?? .null)
        json.append("decoder", decoded.map { .string($0.decoder) } ?? lockedBy.map { .string($0) } ?? .null)
        if let m = decoded?.manufacturer { json.append("manufacturer", .string(m)) }
        if let m = decoded?.model { json.append("model", .string(m)) }
        json.append("packet_id", decoded?.packetID.map { .integer(Int64($0)) } ?? .null)
        if decoded?.encrypted == true || (decoded == nil && lockedBy != nil) { json.append("encrypted", .bool(true)) }
        if let decoded { json.append("values", .object(decoded.values)) }
        var service = JSONObject()
        for (uuid, bytes) in ad.serviceData.sorted(by: { $0.key.shortForm < $1.key.shortForm }) {
            service.append(uuid.shortForm, .string(Hex.encode(bytes)))
        }
        json.append("service_data", .object(service))
        var manufacturer = JSONObject()
        for (id, bytes) in ad.manufacturerData.sorted(by: { $0.key < $1.key }) {
            manufacturer.append("0x" + Hex.encode([UInt8(id >> 8), UInt8(id & 0xFF)]), .string(Hex.encode(bytes)))
        }
        json.append("manufacturer_data", .object(manufacturer))
        return JSONValue.object(json).jsonBytes
    }

    static func ad(
        rssi: Int?, service: [String: [UInt8]] = [:], manufacturer: [UInt16: [UInt8]] = [:]
    ) -> BlueZAdvertisement {
        var data: [BluetoothUUID: [UInt8]] = [:]
        for (uuid, bytes) in service { data[BluetoothUUID(uuid)!] = bytes }
        return BlueZAdvertisement(
            path: "/org/bluez/hci0/dev_A4_C1_38_00_00_05", address: address, rssi: rssi, serviceData: data,
            manufacturerData: manufacturer, dataChanged: true)
    }

    static let cases: [(BlueZAdvertisement, DecodedAdvertisement?)] = [
        (ad(rssi: -70, manufacturer: [0xEC88: [0x00, 0x03, 0x48, 0x0d, 0x64, 0x00]]),
         DecodedAdvertisement(
            decoder: "govee", values: ["temperature": .number(21.5), "humidity": .number(45.6)], manufacturer: "Govee",
            model: "H5075")),
        (ad(rssi: -70, service: ["fe95": [0x58, 0x58]]),
         DecodedAdvertisement(decoder: "xiaomi", packetID: 3, values: ["moisture": .integer(40)], encrypted: true, counter: 9,
            manufacturer: "Xiaomi", model: "HHCCJCY01")),
        (ad(rssi: -61, service: ["181a": [0x05, 0x00, 0xff]]),
         DecodedAdvertisement(decoder: "pvvx", packetID: 7, values: ["temperature": .number(21.5), "battery": .integer(91)])),
        (ad(rssi: nil), nil),
        (ad(rssi: 127, manufacturer: [0x004C: [0x02, 0x15]]), nil),
        (ad(rssi: -100, service: ["fcd2": [0x40], "181a": [], "0000feed-0000-1000-8000-00805f9b34fc": [0xab]],
            manufacturer: [0xFFFF: [1], 0x0001: [], 0x0A0B: [0xde, 0xad]]),
         DecodedAdvertisement(decoder: "bthome_v2", packetID: nil, values: ["text": .string("a \"quoted\"\n line")])),
        (ad(rssi: 0, service: ["fcd2": Array(0...255).map { UInt8($0) }]), DecodedAdvertisement(decoder: "bthome_v2")),
    ]

    @Test("the written payload is the JSON tree's, byte for byte", arguments: 0..<cases.count)
    func sameBytes(_ i: Int) throws {
        let (ad, decoded) = Self.cases[i]
        let written = AdvertisementRouter.payload(ad, decoded)
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: Self.reference(ad, decoded), as: UTF8.self))
        // And it parses as JSON.
        _ = try JSONParser.parse(written)
    }

    @Test("an encrypted frame no key opens: the decoder named, encrypted, no values (SPEC §13)")
    func locked() throws {
        let ad = Self.ad(rssi: -61, service: ["fe95": [0x58, 0x59, 0x5b, 0x05]])
        let written = AdvertisementRouter.payload(ad, nil, lockedBy: "xiaomi")
        #expect(String(decoding: written, as: UTF8.self) == String(decoding: Self.reference(ad, nil, lockedBy: "xiaomi"), as: UTF8.self))
        let json = try JSONParser.parse(written)
        #expect(json["decoder"]?.stringValue == "xiaomi")
        #expect(json["encrypted"]?.boolValue == true)
        #expect(json["values"] == nil)
    }
}
