import ConfigLoader
import Testing

@testable import BridgeCore

/// SPEC §11: a failed pairing is not hammered. ``PairingRetry``'s delays, the machine's hold
/// (``DeviceConnectionStateMachine/Event/holdOff(until:)``) and the agent's refusal while it runs.
@Suite struct PairingRetryTests {
    func t(_ seconds: Double) -> FakeInstant { .seconds(seconds) }

    @Test("30 s doubling to 10 min, exact (no jitter); a reset starts over")
    func delays() {
        var retry = PairingRetry<FakeInstant>()
        #expect(!retry.holds(at: t(0)) && retry.notBefore == nil && retry.failures == 0)
        var now = 0.0
        var delays: [Double] = []
        for _ in 0..<7 {
            let at = retry.failed(at: t(now))
            delays.append(Double(t(now).duration(to: at).components.seconds))
            #expect(retry.holds(at: t(now)) && retry.holds(at: at.advanced(by: .milliseconds(-1))) && !retry.holds(at: at))
            now = Double(at.offset.components.seconds) + 1
        }
        #expect(delays == [30, 60, 120, 240, 480, 600, 600])
        #expect(retry.failures == 7)
        retry.reset()
        #expect(!retry.holds(at: t(now)) && retry.failures == 0 && retry.notBefore == nil)
        #expect(retry.failed(at: t(now)) == t(now + 30), "the first delay again")
    }

    /// No jitter, 1 s doubling to 8 s.
    static let configuration = Machine.Configuration(
        initialDelay: .seconds(1), maxDelay: .seconds(8), jitter: 0, connectTimeout: .seconds(30), resolveTimeout: .seconds(20),
        subscribeTimeout: .seconds(15), disconnectTimeout: .seconds(5), stablePeriod: .seconds(30))

    @Test("holdOff while subscribing: disconnect, and the backoff after Connected=false lasts until the hold; the next failure backs off as usual")
    func holdWhileSubscribing() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectSucceeded, now: t(1))
        _ = machine.handle(.servicesResolved(true), now: t(2))
        _ = machine.handle(.gattObjectsPresent, now: t(2))
        #expect(machine.handle(.holdOff(until: t(32)), now: t(3)) == [.disconnect, .scheduleTick(at: t(8))])
        #expect(machine.handle(.connectedChanged(false), now: t(3.5)) == [.scheduleTick(at: t(32))])
        #expect(machine.state == .backoff(until: t(32)))
        #expect(machine.handle(.tick, now: t(10)) == [], "not before the hold")
        #expect(machine.handle(.tick, now: t(32)) == [.connect, .scheduleTick(at: t(62))])
        #expect(machine.heldUntil == nil, "the attempt ends the hold")
        // A connect that fails then backs off with the reconnect delays again.
        #expect(machine.handle(.connectFailed(.other), now: t(33)) == [.scheduleTick(at: t(34))])
    }

    @Test("holdOff when ready publishes offline; in a backoff it extends it; connectRequested (a reconnect request) lifts it")
    func holdWhenReadyAndLift() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectSucceeded, now: t(1))
        _ = machine.handle(.servicesResolved(true), now: t(2))
        _ = machine.handle(.gattObjectsPresent, now: t(2))
        _ = machine.handle(.subscribed, now: t(3))
        #expect(machine.handle(.holdOff(until: t(100)), now: t(4)) == [.publishAvailability(false), .disconnect, .scheduleTick(at: t(9))])
        _ = machine.handle(.connectedChanged(false), now: t(5))
        #expect(machine.state == .backoff(until: t(100)))
        #expect(machine.handle(.holdOff(until: t(200)), now: t(6)) == [.scheduleTick(at: t(200))])
        #expect(machine.handle(.connectRequested, now: t(7)) == [.connect, .scheduleTick(at: t(37))])
    }

    @Test("holdOff when idle or waiting for a slot: straight into the backoff, the slot request dropped")
    func holdWhenIdle() {
        var c = Self.configuration
        c.usesSlots = true
        var machine = Machine(configuration: c, seed: 1)
        #expect(machine.handle(.holdOff(until: t(30)), now: t(0)) == [.scheduleTick(at: t(30))])
        #expect(machine.state == .backoff(until: t(30)))
        #expect(machine.handle(.discovered, now: t(1)) == [], "a discovery does not end the hold")
        #expect(machine.handle(.tick, now: t(30)) == [.requestSlot])
        #expect(machine.handle(.holdOff(until: t(90)), now: t(31)) == [.releaseSlot, .scheduleTick(at: t(90))])
    }

    @Test("the agent rejects every request of a held device, and only of it")
    func agentRejectsHeld() throws {
        let config = try BridgeConfig.parse(
            yaml: """
                mqtt: { url: "mqtt://127.0.0.1:1" }
                devices:
                  - { match: { address: "D0:5A:00:00:EC:02" }, pairing: passkey, passkey: "012345" }
                  - { match: { address: "D0:5A:00:00:EC:03" }, pairing: just_works }
                """, fileName: "t.yaml", environment: [:], hostName: "h")
        let policy = PairingAgentPolicy(config: config)
        let lock = try #require(BluetoothAddress("D0:5A:00:00:EC:02"))
        let thermo = try #require(BluetoothAddress("D0:5A:00:00:EC:03"))
        #expect(policy.answer(.passkey, address: lock, name: nil, held: false) == .passkey(12345))
        for request: PairingAgentPolicy.Request in [.passkey, .authorization, .confirmation(passkey: 1), .displayPasskey(1, entered: 0)] {
            guard case .reject(let why) = policy.answer(request, address: lock, name: nil, held: true) else {
                Issue.record("\(request) of a held device was answered")
                continue
            }
            #expect(why.contains("failed"))
        }
        #expect(policy.answer(.authorization, address: thermo, name: nil) == .accept)
    }
}
