import BridgeCore
import Testing

@testable import Bridge

/// The value path reads time from the runtime's clock only (issue 28, item 4): the echo window
/// of a read and the per-device time of the last value move with the fake clock, not the machine.
@Suite struct ValueRouterClockTests {
    static let path = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_01/service0010/char0011"
    static let topic = "ble/thermo/180f/2a19"
    /// The payload of the value 42 (SPEC §4).
    static let v = #"{"raw":"2a","value":42}"#

    static func router() -> (ValueRouter, FakeBroker, FakeClock) {
        let broker = FakeBroker(), clock = FakeClock()
        let router = ValueRouter(mqtt: broker, clock: clock)
        router.setRoute(path: path, topic: topic, format: .uint8, device: "thermo")
        return (router, broker, clock)
    }

    @Test("a read's reply equal to the value signalled less than a second before is its echo; later it is published")
    func echoWindowFollowsTheClock() {
        let (router, broker, clock) = Self.router()
        router.handle(path: Self.path, value: [42])
        router.publishRead(path: Self.path, value: [42])
        #expect(broker.texts(Self.topic) == [Self.v], "the read's reply came after its PropertiesChanged echo")

        router.handle(path: Self.path, value: [42])
        clock.advance(by: .milliseconds(999))
        router.publishRead(path: Self.path, value: [42])
        #expect(broker.texts(Self.topic) == [Self.v, Self.v], "999 ms on the runtime's clock: still the echo")

        router.handle(path: Self.path, value: [42])
        clock.advance(by: .seconds(1))
        router.publishRead(path: Self.path, value: [42])
        #expect(broker.texts(Self.topic) == [Self.v, Self.v, Self.v, Self.v], "a second later the read is a value of its own")
    }

    @Test("the time of a device's last value is the runtime's clock's")
    func lastValueIsOnTheClock() {
        let (router, _, clock) = Self.router()
        #expect(router.perDevice["thermo"]?.last == nil)
        clock.advance(by: .seconds(5))
        let sent = clock.now
        router.handle(path: Self.path, value: [7])
        clock.advance(by: .seconds(3))
        #expect(router.perDevice["thermo"]?.last == sent)
        #expect(router.perDevice["thermo"]?.count == 1)
    }
}
