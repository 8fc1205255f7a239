import BridgeCore
import Testing

@testable import RuntimeCore

/// ``SessionCore``'s pairing (SPEC §11) when it fails: the refusal learned from a stale read, `pairing: none` that
/// BlueZ cannot pair, and a failed pairing not hammered (nothing more on that connection, the next one after 30 s
/// doubling, a reconnect request starts over).
@Suite struct SessionCorePairingTests {
    typealias F = SessionCoreFixture
    static let passkeyYAML = F.yaml + "\n    pairing: passkey\n    passkey: \"123456\"\n"
    static let dropped = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e")
    static let refused = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x05")
    static let wrong = BluetoothError(code: .authenticationFailed, name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")

    /// Up to the refusal of 2a38's read that real 5.66 sends after dropping the link (its own pairing attempt
    /// failed): a stale completion, whose lesson is kept.
    static func staleRefusal(_ f: inout F) throws {
        f.driveToResolved()
        _ = f.receive(try f.subscribed("2a37", attempt: 1), F.resolved, at: 2)
        f.expect(try f.subscribed("2a19", attempt: 1), F.resolved, at: 2, ["ReadValue 180d/2a38 #1"])
        _ = f.receive(.connectedChanged(false), F.disconnected, at: 3)
        f.expect(
            .operationFinished(attempt: 1, .read(try f.mapped("2a38"), initial: true, .failure(Self.dropped), linkDropped: true)),
            F.disconnected, at: 3.1, [])
        #expect(f.core.unreadable.isEmpty)
        #expect(f.core.pairing.onConnect, "the next connection pairs first")
        _ = f.step(.deadline, F.disconnected, at: 10)
        _ = f.receive(.slotGranted, F.disconnected, at: 10)
        _ = f.receive(.connectFinished(attempt: 3, error: nil), F.connected, at: 11)
        let setup = f.receive(.servicesResolved(true), F.resolved, at: 12).filter { !$0.hasPrefix("route") }
        #expect(setup == ["Pair #3"], "the setup starts with the pairing")
    }

    @Test("a pairing refusal learned from a stale read (5.66 dropped the link): the next connection pairs first, then reads it")
    func staleRefusalPairsNextConnection() throws {
        var f = try F()
        try Self.staleRefusal(&f)
        f.expect(.pairFinished(attempt: 3, error: nil), F.resolved, at: 12.5, ["report paired", "AcquireNotify 180d/2a37 #3"])
        _ = f.receive(try f.subscribed("2a37", attempt: 3), F.resolved, at: 13)
        f.expect(try f.subscribed("2a19", attempt: 3), F.resolved, at: 13, ["ReadValue 180d/2a38 #3"])
        f.expect(try f.read("2a38", attempt: 3, [5]), F.resolved, at: 13.1, ["publishRead 180d/2a38 [5]", "ReadValue 180f/2a19 #3"])
    }

    @Test("the pairing fails (pairing: none, BlueZ cannot pair it): the refused characteristic is never read again")
    func failedPairingKeepsUnreadable() throws {
        var f = try F()
        try Self.staleRefusal(&f)
        let failed = BluetoothError(code: .authenticationFailed, name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")
        let uuid = BluetoothUUID("2a38")!.uuidString
        // The pairing stood for the refused read: it is remembered at once, and this setup skips it.
        f.expect(.pairFinished(attempt: 3, error: failed), F.resolved, at: 12.5, ["report unreadable \(uuid)", "AcquireNotify 180d/2a37 #3"])
        #expect(f.core.unreadable == [uuid])
        _ = f.receive(try f.subscribed("2a37", attempt: 3), F.resolved, at: 13)
        f.expect(try f.subscribed("2a19", attempt: 3), F.resolved, at: 13, ["ReadValue 180f/2a19 #3"])
        // 5.66 drops the link again with the next refusal of another one: no pairing on the next connection
        // (BlueZ cannot pair it), or every connection would pair, be dropped and start over.
        _ = f.receive(.connectedChanged(false), F.disconnected, at: 14)
        let dropped = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e")
        f.expect(
            .operationFinished(attempt: 3, .read(try f.mapped("2a19"), initial: true, .failure(dropped), linkDropped: true)),
            F.disconnected, at: 14.1, ["report unreadable \(BluetoothUUID("2a19")!.uuidString)"])
        #expect(!f.core.pairing.onConnect)
    }

    @Test("a device configured to pair: BlueZ's own pairing for a read failed (the link dropped): a failed pairing; the next connection, 30 s later, pairs first")
    func staleRefusalWaitsWhenConfiguredToPair() throws {
        var f = try F(yaml: Self.passkeyYAML)
        f.driveToResolved()
        _ = f.receive(try f.subscribed("2a37", attempt: 1), F.resolved, at: 2)
        f.expect(try f.subscribed("2a19", attempt: 1), F.resolved, at: 2, ["ReadValue 180d/2a38 #1"])
        _ = f.receive(.connectedChanged(false), F.disconnected, at: 3)
        f.expect(
            .operationFinished(attempt: 1, .read(try f.mapped("2a38"), initial: true, .failure(Self.dropped), linkDropped: true)),
            F.disconnected, at: 3.1, ["pairingRetry 1 until 33.1"])
        #expect(f.core.pairing.onConnect && f.core.unreadable.isEmpty)
        #expect(f.core.nextDeadline == F.t(33.1))
        f.expect(.deadline, F.disconnected, at: 33.1, ["requestSlot"])
        f.expect(.slotGranted, F.disconnected, at: 33.1, ["connect #3"])
        _ = f.receive(.connectFinished(attempt: 3, error: nil), F.connected, at: 34)
        let setup = f.receive(.servicesResolved(true), F.resolved, at: 35).filter { !$0.hasPrefix("route") }
        #expect(setup == ["Pair #3"], "the setup starts with the pairing")
        f.expect(.pairFinished(attempt: 3, error: nil), F.resolved, at: 35.5, ["report paired", "pairingRetry 0", "AcquireNotify 180d/2a37 #3"])
    }

    @Test("pairing: none, a subscription refused with the link dropped (BlueZ pairs for its CCC write on every connection): the delay applies")
    func subscriptionRefusalWaitsForNone() throws {
        var f = try F()
        f.driveToResolved()
        // The reply came before the core saw the drop: the tree shows it already.
        f.expect(
            .operationFinished(attempt: 1, .subscribed(try f.mapped("2a37"), error: Self.dropped, acquired: false)),
            F.disconnected, at: 2.5, ["pairingRetry 1 until 32.5", "disconnect #1"])
        f.expect(.connectedChanged(false), F.disconnected, at: 2.6, ["releaseSlot", "report link down"])
        #expect(f.core.nextDeadline == F.t(32.5))
    }

    @Test("a wrong passkey: one Pair per connection and nothing after it on that connection; 30 s, then 60 s (a failure whose reply came after the link dropped counts); a reconnect request starts over")
    func wrongPasskeyNotHammered() throws {
        var f = try F(yaml: Self.passkeyYAML)
        f.driveToResolved()
        let refusal = SessionInput.operationFinished(attempt: 1, .subscribed(try f.mapped("2a37"), error: Self.refused, acquired: false))
        f.expect(refusal, F.resolved, at: 2.1, ["Pair #1"])
        f.expect(.pairFinished(attempt: 1, error: Self.wrong), F.resolved, at: 2.5, ["pairingRetry 1 until 32.5", "disconnect #1"])
        #expect(f.core.link?.setup.operations.isEmpty == true && f.core.queue.work.isEmpty && !f.core.queue.busy, "no other protected operation")
        f.expect(.connectedChanged(false), F.disconnected, at: 3, ["releaseSlot", "report link down"])
        #expect(f.core.nextDeadline == F.t(32.5))
        f.expect(.deadline, F.disconnected, at: 32.5, ["requestSlot"])
        f.expect(.slotGranted, F.disconnected, at: 32.5, ["connect #3"])
        _ = f.receive(.connectFinished(attempt: 3, error: nil), F.connected, at: 33)
        _ = f.receive(.servicesResolved(true), F.resolved, at: 34)
        let again = SessionInput.operationFinished(attempt: 3, .subscribed(try f.mapped("2a37"), error: Self.refused, acquired: false))
        f.expect(again, F.resolved, at: 34.1, ["Pair #3"])
        // The link drops before Pair's error reply (as 5.66 and bluez-sim do): the failure still counts.
        f.expect(.connectedChanged(false), F.disconnected, at: 34.4, ["releaseSlot", "report link down"])
        f.expect(.pairFinished(attempt: 3, error: Self.wrong), F.disconnected, at: 34.5, ["pairingRetry 2 until 94.5"])
        #expect(f.core.nextDeadline == F.t(94.5))
        // A reconnect request: the delays start over, a connection now.
        f.expect(.reconnectRequested, F.disconnected, at: 40, ["pairingRetry 0", "requestSlot"])
        f.expect(.slotGranted, F.disconnected, at: 40, ["connect #5"])
        _ = f.receive(.connectFinished(attempt: 5, error: nil), F.connected, at: 41)
        _ = f.receive(.servicesResolved(true), F.resolved, at: 42)
        let third = SessionInput.operationFinished(attempt: 5, .subscribed(try f.mapped("2a37"), error: Self.refused, acquired: false))
        f.expect(third, F.resolved, at: 42.1, ["Pair #5"])
        f.expect(.pairFinished(attempt: 5, error: Self.wrong), F.resolved, at: 42.5, ["pairingRetry 1 until 72.5", "disconnect #5"])
    }

    @Test("a new session of a device whose pairing failed (BlueZ dropped its object, a move): no connection before the delay ends")
    func newSessionKeepsTheDelay() throws {
        var f = try F(connectNow: true, yaml: Self.passkeyYAML)
        var retry = PairingRetry<BridgeInstant>()
        retry.failed(at: F.t(0))
        f.core.pairingRetry = retry
        f.expect(.start, F.disconnected, at: 10, ["availability offline"])
        #expect(f.core.nextDeadline == F.t(30))
        f.expect(.deadline, F.disconnected, at: 30, ["requestSlot"])
    }

    @Test("a poll device: a failed pairing ends the cycle and the next cycle waits for the delay (or its interval, if later)")
    func pollWaitsForTheDelay() throws {
        var f = try F(policy: .poll(interval: .seconds(10), listen: .zero), yaml: Self.passkeyYAML)
        f.expect(.start, F.disconnected, at: 0, ["availability offline", "requestSlot"])
        f.expect(.slotGranted, F.disconnected, at: 0, ["connect #1"])
        _ = f.receive(.connectFinished(attempt: 1, error: nil), F.connected, at: 1)
        _ = f.receive(.servicesResolved(true), F.resolved, at: 2)
        let refusal = SessionInput.operationFinished(attempt: 1, .subscribed(try f.mapped("2a37"), error: Self.refused, acquired: false))
        f.expect(refusal, F.resolved, at: 2.1, ["Pair #1"])
        f.expect(.pairFinished(attempt: 1, error: Self.wrong), F.resolved, at: 2.5, ["pairingRetry 1 until 32.5", "disconnect #1"])
        f.expect(.connectedChanged(false), F.disconnected, at: 3, ["releaseSlot", "report link down"])
        #expect(f.core.cycle.phase == .waiting && f.core.cycle.nextAt == F.t(32.5), "not at the interval (10 s): the delay")
        // A command does not connect on demand meanwhile.
        f.expect(.command(F.get("g", deadline: 25)), F.disconnected, at: 5, [])
        f.expect(.deadline, F.disconnected, at: 10, [])
        f.expect(.deadline, F.disconnected, at: 25, ["respond 2a19 not_connected"])
        f.expect(.deadline, F.disconnected, at: 32.5, ["requestSlot"])
    }
}
