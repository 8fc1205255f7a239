import Testing

@testable import BridgeCore

/// A fake clock instant: an offset from an arbitrary epoch.
struct FakeInstant: InstantProtocol {
    var offset: Duration

    static func seconds(_ value: Double) -> FakeInstant { FakeInstant(offset: .seconds(value)) }
    func advanced(by duration: Duration) -> FakeInstant { FakeInstant(offset: offset + duration) }
    func duration(to other: FakeInstant) -> Duration { other.offset - offset }
    static func < (lhs: FakeInstant, rhs: FakeInstant) -> Bool { lhs.offset < rhs.offset }
}

typealias Machine = DeviceConnectionStateMachine<FakeInstant>

@Suite struct DeviceConnectionStateMachineTests {
    /// No jitter, so delays are exact: 1 s, 2 s, 4 s, ... up to 8 s.
    static let configuration = Machine.Configuration(
        initialDelay: .seconds(1), maxDelay: .seconds(8), jitter: 0,
        connectTimeout: .seconds(30), resolveTimeout: .seconds(20), subscribeTimeout: .seconds(15),
        disconnectTimeout: .seconds(5), stablePeriod: .seconds(30))

    func t(_ seconds: Double) -> FakeInstant { .seconds(seconds) }

    /// A machine driven to `ready` at t=0...3.
    func readyMachine() -> Machine {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectSucceeded, now: t(1))
        _ = machine.handle(.servicesResolved(true), now: t(2))
        _ = machine.handle(.gattObjectsPresent, now: t(2))
        _ = machine.handle(.subscribed, now: t(3))
        return machine
    }

    @Test func happyPath() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        #expect(machine.state == .idle)
        #expect(machine.handle(.discovered, now: t(0)) == [.connect, .scheduleTick(at: t(30))])
        #expect(machine.state == .connecting(deadline: t(30)))
        #expect(machine.handle(.connectSucceeded, now: t(1)) == [.scheduleTick(at: t(21))])
        #expect(machine.state == .resolving(deadline: t(21)))
        #expect(machine.isConnected)
        // Resolving needs both ServicesResolved and the GATT objects.
        #expect(machine.handle(.servicesResolved(true), now: t(2)) == [])
        #expect(machine.state == .resolving(deadline: t(21)))
        #expect(machine.handle(.gattObjectsPresent, now: t(3)) == [.startSubscribing, .scheduleTick(at: t(18))])
        #expect(machine.state == .subscribing(deadline: t(18)))
        #expect(machine.handle(.subscribed, now: t(4)) == [.publishAvailability(true)])
        #expect(machine.state == .ready(since: t(4)))
        #expect(machine.isReady)
    }

    @Test func gattObjectsBeforeServicesResolved() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.connectRequested, now: t(0))
        _ = machine.handle(.connectSucceeded, now: t(1))
        #expect(machine.handle(.gattObjectsPresent, now: t(2)) == [])
        #expect(machine.handle(.servicesResolved(true), now: t(3)) == [.startSubscribing, .scheduleTick(at: t(18))])
    }

    @Test func alreadyResolvedSkipsResolving() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.servicesResolved(true), now: t(0))
        _ = machine.handle(.gattObjectsPresent, now: t(0))
        _ = machine.handle(.connectRequested, now: t(0))
        #expect(machine.handle(.connectSucceeded, now: t(1)) == [.startSubscribing, .scheduleTick(at: t(16))])
    }

    @Test func connectedSignalBeforeReply() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        #expect(machine.handle(.connectedChanged(true), now: t(1)) == [.scheduleTick(at: t(21))])
        #expect(machine.state == .resolving(deadline: t(21)))
        // The late Connect reply changes nothing.
        #expect(machine.handle(.connectSucceeded, now: t(2)) == [])
        #expect(machine.state == .resolving(deadline: t(21)))
    }

    @Test func externallyConnectedDeviceWhileIdle() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        #expect(machine.handle(.connectedChanged(true), now: t(0)) == [.scheduleTick(at: t(20))])
        #expect(machine.state == .resolving(deadline: t(20)))
    }

    @Test func connectFailureBacksOffExponentially() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        var now = 0.0
        _ = machine.handle(.discovered, now: t(now))
        var delays: [Double] = []
        for _ in 0..<6 {
            now += 1
            let actions = machine.handle(.connectFailed(.other), now: t(now))
            guard case .backoff(let until) = machine.state else {
                Issue.record("expected backoff, got \(machine.state)")
                return
            }
            #expect(actions == [.scheduleTick(at: until)])
            delays.append((until.offset - t(now).offset).inSeconds)
            // A tick before the deadline does nothing; at the deadline it reconnects.
            #expect(machine.handle(.tick, now: t(now + 0.5)) == [])
            now = until.offset.inSeconds
            #expect(machine.handle(.tick, now: until) == [.connect, .scheduleTick(at: until.advanced(by: .seconds(30)))])
        }
        #expect(delays == [1, 2, 4, 8, 8, 8])
        #expect(machine.failedAttempts == 6)
    }

    @Test func connectTimeoutCancelsAndBacksOff() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        #expect(machine.handle(.tick, now: t(29)) == [])
        #expect(machine.handle(.tick, now: t(30)) == [.disconnect, .scheduleTick(at: t(31))])
        #expect(machine.state == .backoff(until: t(31)))
    }

    @Test func inProgressBacksOffAndFollowsTheOtherAttempt() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        #expect(machine.handle(.connectFailed(.inProgress), now: t(1)) == [.scheduleTick(at: t(2))])
        #expect(machine.state == .backoff(until: t(2)))
        // The other attempt succeeds during the backoff: go on to resolving.
        #expect(machine.handle(.connectedChanged(true), now: t(1.5)) == [.scheduleTick(at: t(21.5))])
    }

    @Test func abortByLocalWithoutConnectionBacksOff() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        #expect(machine.handle(.connectFailed(.abortByLocal), now: t(1)) == [.scheduleTick(at: t(2))])
        #expect(machine.state == .backoff(until: t(2)))
    }

    @Test func abortByLocalWaitsForDisconnect() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectedChanged(true), now: t(1))
        // Connect then fails with le-connection-abort-by-local while Connected is still true.
        #expect(machine.handle(.connectFailed(.abortByLocal), now: t(2)) == [.waitForDisconnect, .scheduleTick(at: t(7))])
        #expect(machine.state == .disconnecting(deadline: t(7)))
        // No retry until Connected=false arrives.
        #expect(machine.handle(.tick, now: t(3)) == [])
        #expect(machine.handle(.connectedChanged(false), now: t(4)) == [.scheduleTick(at: t(5))])
        #expect(machine.state == .backoff(until: t(5)))
        #expect(!machine.isConnected)
        #expect(machine.handle(.tick, now: t(5)) == [.connect, .scheduleTick(at: t(35))])
    }

    @Test func disconnectWaitTimesOut() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectedChanged(true), now: t(1))
        _ = machine.handle(.connectFailed(.abortByLocal), now: t(2))
        #expect(machine.handle(.tick, now: t(7)) == [.scheduleTick(at: t(8))])
        #expect(machine.state == .backoff(until: t(8)))
    }

    @Test func otherFailureAfterConnectedDisconnects() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectedChanged(true), now: t(1))
        #expect(machine.handle(.connectFailed(.other), now: t(2)) == [.disconnect, .scheduleTick(at: t(7))])
    }

    @Test func notFoundWaitsForDiscovery() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.connectRequested, now: t(0))
        #expect(machine.handle(.connectFailed(.notFound), now: t(1)) == [])
        #expect(machine.state == .idle)
        #expect(machine.handle(.tick, now: t(100)) == [])
        #expect(machine.handle(.discovered, now: t(101)) == [.connect, .scheduleTick(at: t(131))])
    }

    @Test func resolveTimeoutDisconnectsAndRetries() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectSucceeded, now: t(1))
        _ = machine.handle(.servicesResolved(true), now: t(2))  // but no GATT objects
        #expect(machine.handle(.tick, now: t(20)) == [])
        #expect(machine.handle(.tick, now: t(21)) == [.disconnect, .scheduleTick(at: t(26))])
        #expect(machine.state == .disconnecting(deadline: t(26)))
        #expect(machine.handle(.connectedChanged(false), now: t(22)) == [.scheduleTick(at: t(23))])
        #expect(machine.state == .backoff(until: t(23)))
        #expect(!machine.servicesResolved)
        #expect(machine.handle(.tick, now: t(23)) == [.connect, .scheduleTick(at: t(53))])
    }

    @Test func disconnectWhileResolving() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectSucceeded, now: t(1))
        #expect(machine.handle(.connectedChanged(false), now: t(2)) == [.scheduleTick(at: t(3))])
        #expect(machine.state == .backoff(until: t(3)))
    }

    @Test func subscribeFailureAndTimeout() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.servicesResolved(true), now: t(0))
        _ = machine.handle(.gattObjectsPresent, now: t(0))
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectSucceeded, now: t(1))
        #expect(machine.state == .subscribing(deadline: t(16)))
        #expect(machine.handle(.subscribeFailed, now: t(2)) == [.disconnect, .scheduleTick(at: t(7))])

        var timedOut = Machine(configuration: Self.configuration, seed: 1)
        _ = timedOut.handle(.servicesResolved(true), now: t(0))
        _ = timedOut.handle(.gattObjectsPresent, now: t(0))
        _ = timedOut.handle(.discovered, now: t(0))
        _ = timedOut.handle(.connectSucceeded, now: t(1))
        #expect(timedOut.handle(.tick, now: t(16)) == [.disconnect, .scheduleTick(at: t(21))])
    }

    @Test func servicesUnresolvedWhileSubscribingGoesBackToResolving() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.servicesResolved(true), now: t(0))
        _ = machine.handle(.gattObjectsPresent, now: t(0))
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectSucceeded, now: t(1))
        #expect(machine.handle(.servicesResolved(false), now: t(2)) == [.scheduleTick(at: t(22))])
        #expect(machine.state == .resolving(deadline: t(22)))
    }

    @Test func readyDisconnectPublishesOfflineAndBacksOff() {
        var machine = readyMachine()
        #expect(machine.handle(.connectedChanged(false), now: t(10)) == [.publishAvailability(false), .scheduleTick(at: t(11))])
        #expect(machine.state == .backoff(until: t(11)))
        #expect(!machine.isConnected && !machine.servicesResolved && !machine.gattObjectsPresent)
    }

    @Test func servicesChangedWhileReady() {
        var machine = readyMachine()
        #expect(machine.handle(.servicesResolved(false), now: t(10)) == [.publishAvailability(false), .scheduleTick(at: t(30))])
        #expect(machine.state == .resolving(deadline: t(30)))
        _ = machine.handle(.servicesResolved(true), now: t(11))
        #expect(machine.handle(.gattObjectsPresent, now: t(12)) == [.startSubscribing, .scheduleTick(at: t(27))])
    }

    @Test func backoffResetsAfterStableConnection() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        // Three failures: delays 1, 2, 4.
        var now = 0.0
        for failure in 1...3 {
            now += 1
            _ = machine.handle(.connectFailed(.other), now: t(now))
            guard case .backoff(let until) = machine.state else {
                Issue.record("not backing off after failure \(failure): \(machine.state)")
                return
            }
            now = until.offset.inSeconds
            _ = machine.handle(.tick, now: until)
        }
        #expect(machine.failedAttempts == 3)
        _ = machine.handle(.servicesResolved(true), now: t(now))
        _ = machine.handle(.gattObjectsPresent, now: t(now))
        _ = machine.handle(.connectSucceeded, now: t(now))
        _ = machine.handle(.subscribed, now: t(now))
        // A short connection does not reset: the next delay is 8 s.
        #expect(machine.handle(.connectedChanged(false), now: t(now + 5)) == [.publishAvailability(false), .scheduleTick(at: t(now + 13))])
        now += 13
        _ = machine.handle(.tick, now: t(now))
        _ = machine.handle(.servicesResolved(true), now: t(now))
        _ = machine.handle(.gattObjectsPresent, now: t(now))
        _ = machine.handle(.connectSucceeded, now: t(now))
        _ = machine.handle(.subscribed, now: t(now))
        // A stable connection (≥ 30 s) resets: back to 1 s.
        #expect(machine.handle(.connectedChanged(false), now: t(now + 30)) == [.publishAvailability(false), .scheduleTick(at: t(now + 31))])
        #expect(machine.failedAttempts == 0)
    }

    @Test func connectRequestSkipsBackoff() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectFailed(.other), now: t(1))
        #expect(machine.handle(.connectRequested, now: t(1.5)) == [.connect, .scheduleTick(at: t(31.5))])
        // The stale backoff tick (due at t=2) is ignored now.
        #expect(machine.handle(.tick, now: t(2)) == [])
        #expect(machine.state == .connecting(deadline: t(31.5)))
    }

    @Test func connectedDuringBackoff() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        _ = machine.handle(.discovered, now: t(0))
        _ = machine.handle(.connectFailed(.other), now: t(1))
        #expect(machine.handle(.connectedChanged(true), now: t(1.5)) == [.scheduleTick(at: t(21.5))])
        #expect(machine.state == .resolving(deadline: t(21.5)))
    }

    @Test func deviceRemoved() {
        var ready = readyMachine()
        #expect(ready.handle(.deviceRemoved, now: t(10)) == [.publishAvailability(false)])
        #expect(ready.state == .idle)
        #expect(!ready.isConnected)
        var backingOff = Machine(configuration: Self.configuration, seed: 1)
        _ = backingOff.handle(.discovered, now: t(0))
        _ = backingOff.handle(.connectFailed(.other), now: t(1))
        #expect(backingOff.handle(.deviceRemoved, now: t(1.5)) == [])
        #expect(backingOff.handle(.tick, now: t(2)) == [])
        #expect(backingOff.state == .idle)
    }

    @Test func stop() {
        var ready = readyMachine()
        #expect(ready.handle(.stopRequested, now: t(10)) == [.publishAvailability(false), .disconnect])
        #expect(ready.state == .stopped)
        #expect(ready.handle(.discovered, now: t(11)) == [])
        #expect(ready.handle(.connectedChanged(true), now: t(11)) == [])

        var connecting = Machine(configuration: Self.configuration, seed: 1)
        _ = connecting.handle(.discovered, now: t(0))
        #expect(connecting.handle(.stopRequested, now: t(1)) == [.disconnect])

        var idle = Machine(configuration: Self.configuration, seed: 1)
        #expect(idle.handle(.stopRequested, now: t(0)) == [])
        #expect(idle.state == .stopped)
    }

    @Test func ignoresIrrelevantEvents() {
        var machine = Machine(configuration: Self.configuration, seed: 1)
        for event: Machine.Event in [.connectSucceeded, .connectFailed(.other), .subscribed, .subscribeFailed, .tick] {
            #expect(machine.handle(event, now: t(0)) == [])
            #expect(machine.state == .idle)
        }
        var ready = readyMachine()
        for event: Machine.Event in [.discovered, .connectRequested, .connectSucceeded, .subscribed, .tick, .connectedChanged(true)] {
            #expect(ready.handle(event, now: t(100)) == [])
            #expect(ready.isReady)
        }
    }

    @Test func jitterIsDeterministicAndBounded() {
        let jittery = Machine.Configuration(initialDelay: .seconds(10), maxDelay: .seconds(100), jitter: 0.2)
        func delays(seed: UInt64) -> [Duration] {
            var machine = Machine(configuration: jittery, seed: seed)
            var result: [Duration] = []
            var now = t(0)
            _ = machine.handle(.discovered, now: now)
            for failure in 1...5 {
                _ = machine.handle(.connectFailed(.other), now: now)
                guard case .backoff(let until) = machine.state else {
                    Issue.record("seed \(seed): not backing off after failure \(failure): \(machine.state)")
                    return result
                }
                result.append(now.duration(to: until))
                now = until
                _ = machine.handle(.tick, now: now)
            }
            return result
        }
        let first = delays(seed: 7)
        #expect(first == delays(seed: 7))
        #expect(first != delays(seed: 8))
        let bases: [Double] = [10, 20, 40, 80, 100]
        for (delay, base) in zip(first, bases) {
            #expect(delay.inSeconds >= base * 0.8 && delay.inSeconds <= min(100, base * 1.2))
        }
    }

    @Test func configurationFromReconnectSection() {
        let configuration = Machine.Configuration(reconnect: .init(initialDelay: .milliseconds(500), maxDelay: .seconds(30)))
        #expect(configuration.initialDelay == .milliseconds(500))
        #expect(configuration.maxDelay == .seconds(30))
        #expect(configuration.resolveTimeout == .seconds(20))
    }

    @Test func classifiesBlueZErrors() {
        #expect(ConnectErrorClass(errorName: "org.bluez.Error.Failed", message: "le-connection-abort-by-local") == .abortByLocal)
        #expect(ConnectErrorClass(errorName: "org.bluez.Error.InProgress", message: "In Progress") == .inProgress)
        #expect(ConnectErrorClass(errorName: "org.freedesktop.DBus.Error.UnknownObject", message: "") == .notFound)
        #expect(ConnectErrorClass(errorName: "org.bluez.Error.DoesNotExist", message: "") == .notFound)
        #expect(ConnectErrorClass(errorName: "org.bluez.Error.Failed", message: "Software caused connection abort") == .other)
    }
}

@Suite struct BackoffTests {
    @Test func growsAndCaps() {
        var backoff = Backoff(initial: .seconds(1), maximum: .seconds(10), multiplier: 3, jitter: 0, seed: 0)
        #expect((0..<5).map { _ in backoff.next() } == [.seconds(1), .seconds(3), .seconds(9), .seconds(10), .seconds(10)])
        #expect(backoff.attempt == 5)
        backoff.reset()
        #expect(backoff.next() == .seconds(1))
    }

    @Test func splitMixIsDeterministic() {
        var a = SplitMix64(seed: 99)
        var b = SplitMix64(seed: 99)
        #expect((0..<10).map { _ in a.next() } == (0..<10).map { _ in b.next() })
        var unit = SplitMix64(seed: 1)
        for _ in 0..<1000 {
            let value = unit.nextUnit()
            #expect(value >= 0 && value < 1)
        }
    }
}
