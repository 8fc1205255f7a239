import Testing

@testable import BridgeCore

/// The state file's model (SPEC §5): encoding, decoding, and what a damaged file gives.
@Suite struct KnownPeripheralsTests {
    static let strap = KnownPeripheral(
        address: "C8:12:34:56:78:9A", addressType: "random", name: "Polar H10 \"A\"",
        services: ["0000180d-0000-1000-8000-00805f9b34fb"],
        characteristics: ["180d/2a37": "00002a37-0000-1000-8000-00805f9b34fb"],
        unreadable: ["12345678-1234-5678-1234-56789abcdef3", "12345678-1234-5678-1234-56789abcdef5"])
    static let plain = KnownPeripheral(address: "AA:BB:CC:DD:EE:01", addressType: "public")

    @Test func roundTrip() throws {
        let list = KnownPeripherals([Self.strap, Self.plain])
        let bytes = list.encode()
        #expect(try KnownPeripherals.decode(bytes) == list)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("{\"version\":1,\"peripherals\":[\n"))
        #expect(text.split(separator: "\n").count == 4, "one line per peripheral: \(text)")
        #expect(text.contains("\"unreadable\":[\"12345678-1234-5678-1234-56789abcdef3\""))
        // Nothing to say, nothing written.
        #expect(!text.split(separator: "\n")[2].contains("unreadable"))
    }

    @Test func minimalEntries() throws {
        let bytes = Array(#"{"peripherals":[{"address":"aa:bb:cc:dd:ee:ff"},{"address":"11:22:33:44:55:66","address_type":"random","unreadable":["x",1]}]}"#.utf8)
        let list = try KnownPeripherals.decode(bytes)
        #expect(list.peripherals.map(\.address) == ["AA:BB:CC:DD:EE:FF", "11:22:33:44:55:66"])
        #expect(list.peripherals.map(\.addressType) == ["public", "random"])
        #expect(list.peripherals[0].unreadable.isEmpty)
        #expect(list.peripherals[1].unreadable == ["x"], "non-strings are skipped")
    }

    @Test(arguments: [
        ("", "not JSON"),
        ("[]", "no \"peripherals\" array"),
        (#"{"peripherals":[{"address":"nope"}]}"#, "peripherals[0]: missing or invalid \"address\""),
        (#"{"peripherals":[{"address":"aa:bb:cc:dd:ee:ff","address_type":"static"}]}"#,
         "peripherals[0]: \"address_type\" must be public or random"),
    ])
    func damaged(text: String, expected: String) {
        #expect {
            _ = try KnownPeripherals.decode(Array(text.utf8))
        } throws: { error in
            (error as? KnownPeripherals.FormatError)?.description.hasPrefix(expected) == true
        }
    }

    @Test func upsertAndRemove() {
        var list = KnownPeripherals([Self.plain])
        let same = list.upsert(Self.plain)
        #expect(!same, "the same entry changes nothing")
        var changed = Self.plain
        changed.unreadable = ["u"]
        let replaced = list.upsert(changed)
        #expect(replaced)
        #expect(list.peripherals == [changed])
        let added = list.upsert(Self.strap)
        #expect(added)
        #expect(list.peripherals.map(\.address) == [Self.plain.address, Self.strap.address], "first-connected order kept")
        let removed = list.remove(address: Self.plain.address)
        let again = list.remove(address: Self.plain.address)
        #expect(removed && !again)
        #expect(list.peripherals == [Self.strap])
    }
}
