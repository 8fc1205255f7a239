import BridgeCore
import Testing

@testable import RuntimeCore

/// ``AdvertisementCore``: an advertisement device's availability and answers, step by step over a fake clock.
@Suite struct AdvertisementCoreTests {
    typealias Core = AdvertisementCore<BridgeInstant>
    static let address = BluetoothAddress("A4:C1:38:00:00:05")!

    static func t(_ seconds: Int) -> BridgeInstant { BridgeInstant(offset: .seconds(seconds)) }

    static func core() -> Core { Core(address: address, segment: "thermo", timeout: .seconds(60)) }

    /// The actions without the log lines, as text.
    static func decisions(_ actions: [Core.Action]) -> [String] {
        actions.compactMap { action in
            switch action {
            case .publishAvailability(let online): "publish \(online ? "online" : "offline")"
            case .report(.availability(let online)): "report \(online ? "online" : "offline")"
            case .report(.advertised(let a)): "report values \(a.values.keys.sorted().joined(separator: ","))"
            case .report: "report other"
            case .respond(_, let result): "respond \(result.error?.code.rawValue ?? "ok")"
            case .markOffline: "mark offline"
            case .log: nil
            }
        }
    }

    static func advertised(_ names: [String], model: String? = nil) -> HomeAssistantDiscovery.Advertised {
        HomeAssistantDiscovery.Advertised(
            decoder: "bthome_v2", values: Dictionary(uniqueKeysWithValues: names.map { ($0, JSONValue.integer(1)) }), model: model)
    }

    @Test("offline until an advertisement counts; online with the first, its value names reported once")
    func onlineWithFirstAdvertisement() {
        var core = Self.core()
        let quiet = Core.Seen(last: nil, online: false)
        #expect(Self.decisions(core.handle(.start, seen: quiet, now: Self.t(0))) == ["publish offline"])
        #expect(core.nextDeadline(quiet) == nil, "no timer while offline")
        let heard = Core.Seen(last: Self.t(5), online: true)
        #expect(Self.decisions(core.handle(.advertised(Self.advertised(["temperature"])), seen: heard, now: Self.t(5)))
            == ["publish online", "report online", "report values temperature"])
        // The same names again: nothing to report; a new name or a model: reported.
        #expect(Self.decisions(core.handle(.advertised(Self.advertised(["temperature"])), seen: heard, now: Self.t(6))).isEmpty)
        #expect(Self.decisions(core.handle(.advertised(Self.advertised(["humidity", "temperature"])), seen: heard, now: Self.t(7)))
            == ["report values humidity,temperature"])
        #expect(Self.decisions(core.handle(
            .advertised(Self.advertised(["humidity", "temperature"], model: "LYWSD03MMC")), seen: heard, now: Self.t(8)))
            == ["report values humidity,temperature"])
    }

    @Test("an advertisement the router saw before the session started: online at once")
    func onlineAtStart() {
        var core = Self.core()
        #expect(Self.decisions(core.handle(.start, seen: Core.Seen(last: Self.t(0), online: true), now: Self.t(0)))
            == ["publish online", "report online"])
    }

    @Test("offline exactly `timeout` after the last advertisement, not before; the router is told")
    func timeout() {
        var core = Self.core()
        _ = core.handle(.start, seen: Core.Seen(last: Self.t(10), online: true), now: Self.t(10))
        let seen = Core.Seen(last: Self.t(10), online: true)
        #expect(core.nextDeadline(seen) == Self.t(70))
        #expect(Self.decisions(core.handle(.deadline, seen: seen, now: Self.t(69))).isEmpty)
        // A later advertisement moves the timer.
        let later = Core.Seen(last: Self.t(40), online: true)
        #expect(core.nextDeadline(later) == Self.t(100))
        #expect(Self.decisions(core.handle(.deadline, seen: later, now: Self.t(70))).isEmpty)
        #expect(Self.decisions(core.handle(.deadline, seen: later, now: Self.t(100)))
            == ["mark offline", "publish offline", "report offline"])
        #expect(!core.available && core.nextDeadline(later) == nil)
    }

    @Test("commands are answered not_connected at once; the end publishes offline only when online")
    func commandsAndEnd() {
        var core = Self.core()
        let quiet = Core.Seen(last: nil, online: false)
        _ = core.handle(.start, seen: quiet, now: Self.t(0))
        let get = PendingCommand(
            payload: Array(#"{"transaction": 7}"#.utf8), replyTo: nil, device: "thermo", service: "180f",
            characteristic: "2a19", operation: .get, resultTopic: "ble/thermo/180f/2a19/result", deadline: Self.t(10))
        let answer = core.handle(.command(get), seen: quiet, now: Self.t(1))
        #expect(Self.decisions(answer) == ["respond not_connected"])
        if case .respond(_, let result)? = answer.first { #expect(result.transaction == .integer(7)) }
        #expect(Self.decisions(core.handle(.stop, seen: quiet, now: Self.t(2))).isEmpty, "offline already")
        var online = Self.core()
        _ = online.handle(.start, seen: Core.Seen(last: Self.t(0), online: true), now: Self.t(0))
        #expect(Self.decisions(online.handle(.stop, seen: Core.Seen(last: Self.t(0), online: true), now: Self.t(1)))
            == ["publish offline", "report offline"])
    }
}
