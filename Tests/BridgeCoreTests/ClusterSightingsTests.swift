import Testing

@testable import BridgeCore

/// ``SightingsBook`` driven step by step with explicit times (`FakeInstant` seconds; `t` = 1000 + seconds).
@Suite struct ClusterSightingsTests {
    typealias Book = SightingsBook<FakeInstant>
    static let d1 = BluetoothAddress("C8:12:34:56:78:9A")!
    static let d2 = BluetoothAddress("C8:12:34:56:78:9B")!
    static let stranger = BluetoothAddress("00:11:22:33:44:55")!

    func t(_ seconds: Double) -> FakeInstant { .seconds(seconds) }

    /// A book wanting `d1` (and `d2`), broker up at 0 with the first payload published.
    func book(slots: [String: Int] = ["hci0": 3, "hci1": 3]) -> Book {
        var book = Book(wanted: ["d1": Self.d1, "d2": Self.d2], rule: SwitchRule(margin: 10, after: .seconds(30)))
        _ = book.at(0, .adapters(freeSlots: slots))
        #expect(book.at(0, .brokerConnected) != nil)
        return book
    }

    @Test func aReadingCountsFor60Seconds() {
        var book = book()
        _ = book.at(0, .heard(address: Self.d1, adapter: "hci0", rssi: -61))
        _ = book.at(0, .heard(address: Self.stranger, adapter: "hci0", rssi: -40))  // not wanted: ignored
        let early = book.build(now: t(59.9), unixTime: 1)
        #expect(early.devices == ["d1": .init(address: Self.d1, rssi: -61, adapter: "hci0", connected: false)])
        #expect(book.build(now: t(60), unixTime: 1).devices == [:])
        #expect(book.readings["d1"] == nil)  // dropped, not only hidden
        // Heard again: back.
        _ = book.at(70, .heard(address: Self.d1, adapter: "hci1", rssi: -70))
        #expect(book.build(now: t(129.9), unixTime: 1).devices["d1"]?.adapter == "hci1")
    }

    @Test func invalidRSSIsAreIgnored() {
        var book = book()
        for invalid in [127, 21, 200, -129, -1000] {
            _ = book.at(1, .heard(address: Self.d1, adapter: "hci0", rssi: invalid))
        }
        #expect(book.build(now: t(1), unixTime: 1).devices == [:])
        #expect(Book.isValid(rssi: -128) && Book.isValid(rssi: 20) && Book.isValid(rssi: -61))
        // 127 does not replace or refresh a real reading.
        _ = book.at(2, .heard(address: Self.d1, adapter: "hci0", rssi: -70))
        _ = book.at(50, .heard(address: Self.d1, adapter: "hci0", rssi: 127))
        #expect(book.build(now: t(50), unixTime: 1).devices["d1"]?.rssi == -70)
        #expect(book.build(now: t(62), unixTime: 1).devices["d1"] == nil)
    }

    @Test func theAdapterIsTheLinksElseTheOneThatHearsBest() {
        var book = book()
        _ = book.at(1, .heard(address: Self.d1, adapter: "hci0", rssi: -80))
        _ = book.at(1, .heard(address: Self.d1, adapter: "hci1", rssi: -60))
        #expect(book.build(now: t(1), unixTime: 1).devices["d1"] == .init(address: Self.d1, rssi: -60, adapter: "hci1", connected: false))
        #expect(book.adapter(for: "d1") == "hci1")
        // Linked through the weaker adapter: that one is named, with its RSSI there.
        _ = book.at(2, .linkUp(address: Self.d1, adapter: "hci0"))
        #expect(book.build(now: t(2), unixTime: 1).devices["d1"] == .init(address: Self.d1, rssi: -80, adapter: "hci0", connected: true))
        #expect(book.adapter(for: "d1") == "hci0")
        // Still linked after every reading expired: listed, strength unknown.
        #expect(book.build(now: t(100), unixTime: 1).devices["d1"] == .init(address: Self.d1, rssi: nil, adapter: "hci0", connected: true))
        _ = book.at(101, .linkDown(address: Self.d1))
        #expect(book.build(now: t(101), unixTime: 1).devices["d1"] == nil)
    }

    @Test func aLinkIsNamedEvenWhenAMoveIsDecided() {
        var book = book()
        _ = book.at(1, .linkUp(address: Self.d1, adapter: "hci0"))
        for second in [1.0, 31] {
            _ = book.at(second, .heard(address: Self.d1, adapter: "hci0", rssi: -80))
            _ = book.at(second, .heard(address: Self.d1, adapter: "hci1", rssi: -60))
            #expect(book.build(now: t(second), unixTime: 1).devices["d1"] == .init(address: Self.d1, rssi: -80, adapter: "hci0", connected: true))
        }
        #expect(book.adapter(for: "d1") == "hci1")  // AdapterChoice moves it once the link is down
        _ = book.at(32, .linkDown(address: Self.d1))
        #expect(book.build(now: t(32), unixTime: 1).devices["d1"] == .init(address: Self.d1, rssi: -60, adapter: "hci1", connected: false))
    }

    @Test func theBestAdapterNeedsAFreeSlotAndHysteresisHolds() {
        var book = book(slots: ["hci0": 2, "hci1": 0])
        _ = book.at(1, .heard(address: Self.d1, adapter: "hci0", rssi: -80))
        _ = book.at(1, .heard(address: Self.d1, adapter: "hci1", rssi: -60))
        #expect(book.build(now: t(1), unixTime: 1).devices["d1"]?.adapter == "hci0")
        // No free slot anywhere: the one that hears it best, whose free_slots 0 tells the others.
        _ = book.at(2, .adapters(freeSlots: ["hci0": 0, "hci1": 0]))
        #expect(book.build(now: t(2), unixTime: 1).devices["d1"]?.adapter == "hci1")
        // hci1 gone: what it heard no longer counts.
        _ = book.at(3, .adapters(freeSlots: ["hci0": 1]))
        #expect(book.build(now: t(3), unixTime: 1).devices["d1"] == .init(address: Self.d1, rssi: -80, adapter: "hci0", connected: false))
        // Back with a slot and 20 dB stronger: AdapterChoice's switch_after applies (30 s), not an instant move.
        _ = book.at(4, .adapters(freeSlots: ["hci0": 1, "hci1": 1]))
        _ = book.at(4, .heard(address: Self.d1, adapter: "hci1", rssi: -60))
        #expect(book.build(now: t(4), unixTime: 1).devices["d1"]?.adapter == "hci0")
        _ = book.at(33, .heard(address: Self.d1, adapter: "hci1", rssi: -60))
        _ = book.at(33, .heard(address: Self.d1, adapter: "hci0", rssi: -80))
        #expect(book.build(now: t(33), unixTime: 1).devices["d1"]?.adapter == "hci0")
        #expect(book.build(now: t(34), unixTime: 1).devices["d1"]?.adapter == "hci1")
    }

    @Test func freeSlotsAreReportedAsGiven() {
        var book = book(slots: ["hci0": 3, "hci1": 0])
        #expect(book.build(now: t(1), unixTime: 1).adapters == ["hci0": .init(freeSlots: 3), "hci1": .init(freeSlots: 0)])
        _ = book.at(2, .adapters(freeSlots: ["hci1": 2]))
        #expect(book.build(now: t(2), unixTime: 1).adapters == ["hci1": .init(freeSlots: 2)])
        // Out of what the decoder accepts: clamped, so the others can read it.
        _ = book.at(3, .adapters(freeSlots: ["hci0": -1, "hci1": 5000]))
        #expect(book.build(now: t(3), unixTime: 1).adapters == ["hci0": .init(freeSlots: 0), "hci1": .init(freeSlots: 1000)])
    }

    @Test func publishesOnTheBeatAtOnceOnRequestAndNotTooOften() {
        var book = Book(wanted: ["d1": Self.d1])
        _ = book.at(0, .adapters(freeSlots: ["hci0": 3]))
        #expect(book.nextDeadline(after: t(0)) == nil)  // broker down: nothing
        #expect(book.at(0, .publishRequested) == nil)
        let first = book.at(0.5, .brokerConnected)
        #expect(first?.time == 1000)
        #expect(book.nextDeadline(after: t(0.5)) == t(5.5))
        #expect(book.at(5.4, .tick) == nil)
        // The beat publishes even when nothing changed (the others' staleness needs it).
        #expect(book.at(5.5, .tick) == SightingsPayload(time: 1005, adapters: ["hci0": .init(freeSlots: 3)], devices: [:]))
        // A request inside the 500 ms gap waits for its end; unchanged then: dropped.
        #expect(book.at(5.7, .publishRequested) == nil)
        #expect(book.nextDeadline(after: t(5.7)) == t(6))
        #expect(book.at(6, .tick) == nil)
        #expect(book.nextDeadline(after: t(6)) == t(10.5))
        // Changed (a claim took a slot), requested: at once.
        _ = book.at(7, .adapters(freeSlots: ["hci0": 2]))
        #expect(book.at(7, .tick) == nil)  // a change alone waits for the beat or a request
        #expect(book.at(7, .publishRequested)?.adapters["hci0"]?.freeSlots == 2)
        #expect(book.nextDeadline(after: t(7)) == t(12))
        // Changed again 200 ms later: held to 500 ms after the last one.
        _ = book.at(7.2, .adapters(freeSlots: ["hci0": 1]))
        #expect(book.at(7.2, .publishRequested) == nil)
        #expect(book.at(7.3, .heard(address: Self.d1, adapter: "hci0", rssi: -50)) == nil)
        let held = book.at(7.5, .tick)
        #expect(held?.adapters["hci0"]?.freeSlots == 1)
        #expect(held?.devices["d1"]?.rssi == -50)
        #expect(book.at(7.6, .publishRequested) == nil)
        #expect(book.at(12.4, .tick) == nil)  // the request at 7.6 found nothing new at 8
        #expect(book.at(12.5, .tick) != nil)
        // Broker lost: silent; back: at once.
        #expect(book.at(13, .brokerDisconnected) == nil)
        #expect(book.at(20, .tick) == nil)
        #expect(book.nextDeadline(after: t(20)) == nil)
        #expect(book.at(21, .brokerConnected) != nil)
        #expect(book.nextDeadline(after: t(21)) == t(26))
    }

    @Test func aDeviceHeardFirstIsPublishedAtOnceItsRSSIChangesAreNot() {
        var book = Book(wanted: ["d1": Self.d1, "d2": Self.d2])
        _ = book.at(0, .adapters(freeSlots: ["hci0": 3]))
        #expect(book.at(0, .brokerConnected)?.devices.isEmpty == true)
        // New: published at the next tick (the reading itself never publishes), as soon as the rate limit allows.
        #expect(book.at(1, .heard(address: Self.d1, adapter: "hci0", rssi: -60)) == nil)
        #expect(book.nextDeadline(after: t(1)) == t(0.5))
        #expect(book.at(1, .tick)?.devices["d1"]?.rssi == -60)
        // Known: its RSSI waits for the beat.
        #expect(book.at(1.1, .heard(address: Self.d1, adapter: "hci0", rssi: -40)) == nil)
        #expect(book.nextDeadline(after: t(1.1)) == t(6))
        // Another new one inside the gap: at the gap's end.
        #expect(book.at(1.2, .heard(address: Self.d2, adapter: "hci0", rssi: -70)) == nil)
        #expect(book.nextDeadline(after: t(1.2)) == t(1.5))
        #expect(book.at(1.5, .tick)?.devices["d2"]?.rssi == -70)
    }

    @Test func thePayloadRoundTripsThroughTheDecoder() throws {
        var book = book(slots: ["hci0": 3, "hci1": 0])
        _ = book.at(1, .heard(address: Self.d1, adapter: "hci0", rssi: -61))
        _ = book.at(1, .heard(address: Self.d2, adapter: "hci1", rssi: -75))
        _ = book.at(1, .linkUp(address: Self.d2, adapter: "hci1"))
        let payload = book.build(now: t(1), unixTime: 1_700_000_000)
        #expect(try SightingsPayload.decodeRetained(payload.jsonBytes) == payload)
        #expect(String(decoding: payload.jsonBytes, as: UTF8.self) == #"{"t":1700000000,"adapters":{"hci0":{"free_slots":3},"hci1":{"free_slots":0}},"devices":{"d1":{"address":"C8:12:34:56:78:9A","rssi":-61,"adapter":"hci0","connected":false},"d2":{"address":"C8:12:34:56:78:9B","rssi":-75,"adapter":"hci1","connected":true}}}"#)
    }

    /// Two bridges' books feed two ownership cores: the one that hears best with a free slot claims.
    @Test func ownershipCoresDecideFromBuiltSightings() {
        func sightings(rssi: Int, slots: Int) -> SightingsPayload {
            var book = Book(wanted: ["d1": Self.d1])
            _ = book.at(0, .adapters(freeSlots: ["hci0": slots]))
            _ = book.at(0, .heard(address: Self.d1, adapter: "hci0", rssi: rssi))
            return book.at(0, .brokerConnected)!
        }
        for (bSlots, winner) in [(2, "b"), (0, "a")] {
            let views = ["a": sightings(rssi: -80, slots: 2), "b": sightings(rssi: -50, slots: bSlots)]
            var a = ClusterFixture.core("a")
            var b = ClusterFixture.core("b")
            _ = a.join(at: 0, online: ["a", "b"], sightings: views)
            _ = b.join(at: 0, online: ["a", "b"], sightings: views)
            let claim: [ClusterAction] = [.publishOwner(device: "d1", bridge: winner, adapter: "hci0"), .publishSightings]
            #expect(a.at(5, .tick) == (winner == "a" ? claim : []))
            #expect(b.at(5, .tick) == (winner == "b" ? claim : []))
        }
    }
}

extension SightingsBook<FakeInstant> {
    /// Handles `input` at `seconds`, with `t` = 1000 + whole seconds.
    mutating func at(_ seconds: Double, _ input: SightingsInput) -> SightingsPayload? {
        handle(input, now: .seconds(seconds), unixTime: 1000 + Int64(seconds))
    }
}
