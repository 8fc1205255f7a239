import BridgeCore
import Testing

@testable import RuntimeCore

/// ``SupervisorCore``'s Home Assistant timers (``HomeAssistantSchedule``): the legacy window that
/// holds device configs after the first broker connection, and the resend of the last values
/// after configs went out. Driven directly: no task, no clock, no broker.
@Suite struct SupervisorCoreHomeAssistantTests {
    typealias F = CoreFixture

    static let yaml = "bluetooth: { services: [\"180f\"] }\nhomeassistant: { discovery: true }"

    static func tick(_ core: inout SupervisorCore, _ ms: Int64) -> [SupervisorCore.Action] {
        core.handle(.tick(lastAdvertisement: nil), now: F.at(ms), tree: F.scanningTree).decisions
            .filter { if case .publishHealth = $0 { false } else { true } }
    }

    static func homeAssistant(_ actions: [SupervisorCore.Action]) -> [SupervisorCore.Action] {
        actions.filter {
            switch $0 {
            case .homeAssistantPublish, .homeAssistantRepublish, .homeAssistantReleaseHeld, .resendLastValues: true
            default: false
            }
        }
    }

    static let mapped = MappedDevice(
        characteristics: ["battery/level": "00002a19-0000-1000-8000-00805f9b34fb"],
        services: ["0000180f-0000-1000-8000-00805f9b34fb"], serviceSegments: ["battery"], discovery: [], name: nil,
        information: DeviceInformation())

    @Test("the first broker connection holds device configs for the legacy window; released, every value follows 2 s later")
    func legacyWindow() throws {
        var core = try F.scanning(Self.yaml)
        let thermo = F.device(F.thermo, uuids: ["180f"])
        _ = core.handle(.deviceAdded(path: thermo.path), now: F.at(1000), tree: F.tree(devices: [thermo]))
        #expect(core.nextDeadline.map { $0 > F.at(10_000) } ?? true, "no Home Assistant timer before the broker")

        let connected = core.handle(.brokerConnected, now: F.at(2000), tree: F.scanningTree)
        #expect(Self.homeAssistant(connected) == [.homeAssistantRepublish(reason: "connected to the broker", startHold: true)])
        #expect(core.nextDeadline == F.at(3000), "the window ends 1 s later")

        // Mapped inside the window: held.
        let mapped = core.handle(.mapped(path: thermo.path, Self.mapped), now: F.at(2500), tree: F.scanningTree)
        guard case .homeAssistantPublish(let path, let peripheral, let hold)? = Self.homeAssistant(mapped).first else {
            Issue.record("no discovery config: \(mapped)")
            return
        }
        #expect(path == thermo.path && peripheral.device == "e45f01abcdef" && hold)

        #expect(Self.tick(&core, 2999) == [], "not before the window ends")
        #expect(Self.tick(&core, 3000) == [.homeAssistantReleaseHeld])
        #expect(Self.tick(&core, 3001) == [], "released once")
        // The republish scheduled every value for 2000 + 2 s; the held configs going out at 3000 move it to 5000.
        _ = core.handle(.homeAssistantSent(devices: nil), now: F.at(3000), tree: F.scanningTree)
        #expect(Self.tick(&core, 4999) == [])
        #expect(Self.tick(&core, 5000) == [.resendLastValues(devices: nil)])
        #expect(Self.tick(&core, 7000) == [], "sent once")

        // Later connections and Home Assistant's birth: no new window, nothing held.
        let again = core.handle(.homeAssistantOnline, now: F.at(8000), tree: F.scanningTree)
        #expect(Self.homeAssistant(again) == [.homeAssistantRepublish(reason: "Home Assistant is online", startHold: false)])
        let remapped = core.handle(.mapped(path: thermo.path, Self.mapped), now: F.at(8100), tree: F.scanningTree)
        #expect(Self.homeAssistant(remapped).contains { if case .homeAssistantPublish(_, _, false) = $0 { true } else { false } })
        #expect(Self.tick(&core, 9999) == [])
        #expect(Self.tick(&core, 10_000) == [.resendLastValues(devices: nil)])
    }

    @Test("one device's config out: only its last values follow, 2 s after the last config")
    func oneDevice() throws {
        var core = try F.scanning(Self.yaml)
        _ = core.handle(.brokerConnected, now: F.at(0), tree: F.scanningTree)
        #expect(Self.tick(&core, 1000) == [.homeAssistantReleaseHeld])
        #expect(Self.tick(&core, 2000) == [.resendLastValues(devices: nil)])
        _ = core.handle(.homeAssistantSent(devices: ["a"]), now: F.at(3000), tree: F.scanningTree)
        _ = core.handle(.homeAssistantSent(devices: ["b"]), now: F.at(4000), tree: F.scanningTree)
        #expect(core.nextDeadline == F.at(6000))
        #expect(Self.tick(&core, 5000) == [])
        #expect(Self.tick(&core, 6000) == [.resendLastValues(devices: ["a", "b"])])
    }

    @Test("while shutting down the Home Assistant timers do not fire")
    func notWhileStopping() throws {
        var core = try F.scanning(Self.yaml)
        _ = core.handle(.brokerConnected, now: F.at(0), tree: F.scanningTree)
        _ = core.handle(.stop, now: F.at(500), tree: F.scanningTree)
        #expect(core.finished)
        #expect(core.nextDeadline == nil)
        #expect(Self.tick(&core, 5000) == [])
    }
}
