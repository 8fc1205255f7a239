import Testing

@testable import BridgeCore

@Suite struct ClusterPayloadTests {
    static let specSightings =
        #"{"t":1700000000,"adapters":{"hci0":{"free_slots":3}},"devices":{"c8123456789a":{"address":"C8:12:34:56:78:9A","rssi":-61,"adapter":"hci0","connected":true}}}"#

    @Test func sightingsRoundTripExactly() throws {
        let payload = try SightingsPayload(bytes: Array(Self.specSightings.utf8))
        #expect(payload.time == 1_700_000_000)
        #expect(payload.adapters == ["hci0": .init(freeSlots: 3)])
        let device = try #require(payload.devices["c8123456789a"])
        #expect(device.address.description == "C8:12:34:56:78:9A")
        #expect(device.rssi == -61)
        #expect(device.adapter == "hci0")
        #expect(device.connected)
        #expect(String(decoding: payload.jsonBytes, as: UTF8.self) == Self.specSightings)
    }

    @Test func sightingsEncodeSortedAndNullRSSI() throws {
        let address = try #require(BluetoothAddress("AA:BB:CC:DD:EE:01"))
        let payload = SightingsPayload(
            time: 5, adapters: ["hci1": .init(freeSlots: 0), "hci0": .init(freeSlots: 7)],
            devices: [
                "z": .init(address: address, rssi: nil, adapter: "hci1", connected: false),
                "a": .init(address: address, rssi: -90, adapter: "hci0", connected: false),
            ])
        let text = String(decoding: payload.jsonBytes, as: UTF8.self)
        #expect(
            text
                == #"{"t":5,"adapters":{"hci0":{"free_slots":7},"hci1":{"free_slots":0}},"devices":{"a":{"address":"AA:BB:CC:DD:EE:01","rssi":-90,"adapter":"hci0","connected":false},"z":{"address":"AA:BB:CC:DD:EE:01","rssi":null,"adapter":"hci1","connected":false}}}"#
        )
        #expect(try SightingsPayload(bytes: payload.jsonBytes) == payload)
        #expect(!payload.hasFreeSlot(on: "hci1"))
        #expect(payload.hasFreeSlot(on: "hci0"))
        #expect(!payload.hasFreeSlot(on: "hci9"))
    }

    @Test func ownerRoundTripExactly() throws {
        let text = #"{"bridge":"kitchen","adapter":"hci1","since":1700000123}"#
        let payload = try OwnerPayload(bytes: Array(text.utf8))
        #expect(payload == OwnerPayload(bridge: "kitchen", adapter: "hci1", since: 1_700_000_123))
        #expect(String(decoding: payload.jsonBytes, as: UTF8.self) == text)
        // Extra members are ignored (a later version may add some).
        let extended = try OwnerPayload(bytes: Array(#"{"since":1,"x":[1],"adapter":"hci0","bridge":"a-b_1"}"#.utf8))
        #expect(extended == OwnerPayload(bridge: "a-b_1", adapter: "hci0", since: 1))
    }

    @Test func emptyRetainedPayloadMeansAbsent() throws {
        #expect(try OwnerPayload.decodeRetained([]) == nil)
        #expect(try SightingsPayload.decodeRetained([]) == nil)
        #expect(try OwnerPayload.decodeRetained(Array(#"{"bridge":"a","adapter":"hci0","since":0}"#.utf8)) != nil)
    }

    static let badOwners: [(String, ClusterPayloadError.Code, String)] = [
        ("", .invalidJSON, ""),
        ("online", .invalidJSON, ""),
        ("[1]", .wrongType, ""),
        (#"{"adapter":"hci0","since":1}"#, .missingField, "bridge"),
        (#"{"bridge":7,"adapter":"hci0","since":1}"#, .wrongType, "bridge"),
        (#"{"bridge":"Kitchen","adapter":"hci0","since":1}"#, .invalidValue, "bridge"),
        (#"{"bridge":"a/b","adapter":"hci0","since":1}"#, .invalidValue, "bridge"),
        (#"{"bridge":"","adapter":"hci0","since":1}"#, .invalidValue, "bridge"),
        (#"{"bridge":"a","adapter":"hci0","since":-1}"#, .invalidValue, "since"),
        (#"{"bridge":"a","adapter":"hci0","since":1.5}"#, .wrongType, "since"),
        (#"{"bridge":"a","adapter":"hci0","since":"1"}"#, .wrongType, "since"),
        (#"{"bridge":"a","since":1}"#, .missingField, "adapter"),
    ]

    @Test(arguments: badOwners) func ownerRejectsMalformed(text: String, code: ClusterPayloadError.Code, path: String) {
        #expect {
            _ = try OwnerPayload(bytes: Array(text.utf8))
        } throws: { error in
            guard let error = error as? ClusterPayloadError else { return false }
            return error.code == code && error.path == path && !error.description.isEmpty
        }
    }

    static let device = #""address":"C8:12:34:56:78:9A","adapter":"hci0","connected":false"#
    static let badSightings: [(String, ClusterPayloadError.Code, String)] = [
        (#"{"adapters":{},"devices":{}}"#, .missingField, "t"),
        (#"{"t":1,"devices":{}}"#, .missingField, "adapters"),
        (#"{"t":1,"adapters":{}}"#, .missingField, "devices"),
        (#"{"t":1,"adapters":[],"devices":{}}"#, .wrongType, "adapters"),
        (#"{"t":1,"adapters":{"hci0":3},"devices":{}}"#, .wrongType, "adapters.hci0"),
        (#"{"t":1,"adapters":{"hci0":{}},"devices":{}}"#, .missingField, "adapters.hci0.free_slots"),
        (#"{"t":1,"adapters":{"hci0":{"free_slots":-1}},"devices":{}}"#, .invalidValue, "adapters.hci0.free_slots"),
        (#"{"t":1,"adapters":{"HCI 0":{"free_slots":1}},"devices":{}}"#, .invalidValue, "adapters.HCI 0"),
        (#"{"t":1,"adapters":{},"devices":{"d":{"rssi":-1,"address":"nope","adapter":"hci0","connected":false}}}"#, .invalidValue, "devices.d.address"),
        (#"{"t":1,"adapters":{},"devices":{"d":{\#(device)}}}"#, .missingField, "devices.d.rssi"),
        (#"{"t":1,"adapters":{},"devices":{"d":{"rssi":"-1",\#(device)}}}"#, .wrongType, "devices.d.rssi"),
        (#"{"t":1,"adapters":{},"devices":{"d":{"rssi":-500,\#(device)}}}"#, .invalidValue, "devices.d.rssi"),
        (#"{"t":1,"adapters":{},"devices":{"d":{"rssi":-1,"address":"C8:12:34:56:78:9A","adapter":"hci0","connected":1}}}"#, .wrongType, "devices.d.connected"),
        (#"{"t":1,"adapters":{},"devices":{"":{"rssi":-1,\#(device)}}}"#, .invalidValue, "devices."),
        (#"{"t":1,"adapters":{},"devices":{"d":null}}"#, .wrongType, "devices.d"),
    ]

    @Test(arguments: badSightings) func sightingsRejectMalformed(text: String, code: ClusterPayloadError.Code, path: String) {
        #expect {
            _ = try SightingsPayload(bytes: Array(text.utf8))
        } throws: { error in
            guard let error = error as? ClusterPayloadError else { return false }
            return error.code == code && error.path == path
        }
    }

    /// Whatever a broker sends, decoding returns or throws: random mutations of valid payloads never trap.
    @Test func randomBytesNeverTrap() {
        var random = SplitMix64(seed: 17)
        let seeds = [Array(Self.specSightings.utf8), Array(#"{"bridge":"kitchen","adapter":"hci1","since":17}"#.utf8)]
        var decoded = 0
        for round in 0..<4000 {
            var bytes = seeds[round % 2]
            for _ in 0...Int(random.next() % 4) {
                let index = Int(random.next() % UInt64(bytes.count))
                switch random.next() % 3 {
                case 0: bytes[index] = UInt8(truncatingIfNeeded: random.next())
                case 1: bytes.remove(at: index)
                default: bytes.insert(Array(#"{}[]",:-0"#.utf8)[Int(random.next() % 9)], at: index)
                }
            }
            if (try? SightingsPayload.decodeRetained(bytes)) != nil { decoded += 1 }
            if (try? OwnerPayload.decodeRetained(bytes)) != nil { decoded += 1 }
        }
        #expect(decoded > 0)  // some mutations stay valid (a digit changed): the decoder is exercised both ways
    }
}
