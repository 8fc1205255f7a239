import Testing

@testable import BridgeCore

/// Connection slots (`bluetooth.max_connections`) and releases (poll cycles) in the machine.
@Suite struct StateMachineSlotTests {
    static var configuration: Machine.Configuration {
        var c = DeviceConnectionStateMachineTests.configuration
        c.usesSlots = true
        return c
    }

    func t(_ seconds: Double) -> FakeInstant { .seconds(seconds) }

    @Test func connectWaitsForASlot() {
        var m = Machine(configuration: Self.configuration, seed: 1)
        #expect(m.handle(.discovered, now: t(0)) == [.requestSlot])
        #expect(m.state == .waitingForSlot)
        // Waiting is not bounded by the connect timeout.
        #expect(m.handle(.tick, now: t(100)) == [])
        #expect(m.handle(.slotGranted, now: t(100)) == [.connect, .scheduleTick(at: t(130))])
        #expect(m.hasSlot)
    }

    @Test func readyKeepsTheSlotAndALostLinkGivesItBack() {
        var m = Machine(configuration: Self.configuration, seed: 1)
        _ = m.handle(.discovered, now: t(0))
        _ = m.handle(.slotGranted, now: t(0))
        _ = m.handle(.connectSucceeded, now: t(1))
        _ = m.handle(.servicesResolved(true), now: t(1))
        _ = m.handle(.gattObjectsPresent, now: t(1))
        #expect(m.handle(.subscribed, now: t(2)) == [.publishAvailability(true)])
        #expect(m.hasSlot)
        let actions = m.handle(.connectedChanged(false), now: t(3))
        #expect(actions.contains(.releaseSlot))
        #expect(!m.hasSlot)
        // The retry asks again.
        guard case .backoff(let until) = m.state else { Issue.record("not backing off: \(m.state)"); return }
        #expect(m.handle(.tick, now: until) == [.requestSlot])
    }

    @Test func aFailedAttemptGivesTheSlotBack() {
        var m = Machine(configuration: Self.configuration, seed: 1)
        _ = m.handle(.discovered, now: t(0))
        _ = m.handle(.slotGranted, now: t(0))
        let actions = m.handle(.connectFailed(.other), now: t(1))
        #expect(actions.first == .releaseSlot)
        #expect(!m.hasSlot)
    }

    @Test func releaseDisconnectsAndStaysIdle() {
        var m = Machine(configuration: Self.configuration, seed: 1)
        _ = m.handle(.connectRequested, now: t(0))
        _ = m.handle(.slotGranted, now: t(0))
        _ = m.handle(.connectSucceeded, now: t(1))
        _ = m.handle(.servicesResolved(true), now: t(1))
        _ = m.handle(.gattObjectsPresent, now: t(1))
        _ = m.handle(.subscribed, now: t(2))
        #expect(m.handle(.releaseRequested, now: t(3)) == [.publishAvailability(false), .disconnect, .scheduleTick(at: t(8))])
        #expect(m.handle(.connectedChanged(false), now: t(4)) == [.releaseSlot])
        #expect(m.state == .idle)
        // No reconnect by itself.
        #expect(m.handle(.tick, now: t(100)) == [])
        #expect(m.state == .idle)
    }

    @Test func releaseWhileWaitingLeavesTheQueue() {
        var m = Machine(configuration: Self.configuration, seed: 1)
        _ = m.handle(.connectRequested, now: t(0))
        #expect(m.handle(.releaseRequested, now: t(1)) == [.releaseSlot])
        #expect(m.state == .idle)
        // A grant that crossed the release is given back.
        #expect(m.handle(.slotGranted, now: t(1)) == [.releaseSlot])
    }

    @Test func releaseEndsABackoff() {
        var m = Machine(configuration: Self.configuration, seed: 1)
        _ = m.handle(.connectRequested, now: t(0))
        _ = m.handle(.slotGranted, now: t(0))
        _ = m.handle(.connectFailed(.other), now: t(1))
        #expect(m.handle(.releaseRequested, now: t(1.5)) == [])
        #expect(m.state == .idle)
    }

    @Test func withoutSlotsNothingChanges() {
        var m = Machine(configuration: DeviceConnectionStateMachineTests.configuration, seed: 1)
        #expect(m.handle(.discovered, now: t(0)) == [.connect, .scheduleTick(at: t(30))])
    }
}
