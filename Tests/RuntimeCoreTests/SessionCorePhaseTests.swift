import BridgeCore
import Testing

@testable import RuntimeCore

/// ``SessionCore``'s phases (``SessionPhase``): what a link carries goes with it, what outlives it stays, and an
/// ended session keeps nothing.
@Suite struct SessionCorePhaseTests {
    typealias F = SessionCoreFixture
    static let refused = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x05")
    static let pollYAML = F.yaml + """

            characteristics:
              - { uuid: "2a19", poll: 5s }
        """

    /// Where a session is when something happens to it; each leaves one command (`q`, deadline 30 s) queued.
    enum Where: String, CaseIterable, CustomTestStringConvertible {
        /// No link yet: connecting.
        case connecting
        /// Connected, services not resolved: a link without a setup.
        case resolving
        /// The setup's first subscription in flight.
        case settingUp
        /// `Pair` in flight for a refused subscription of the setup.
        case pairingInSetup
        /// `Pair` in flight for a refused command: the command is the one to run again.
        case pairingForCommand
        /// Ready, a command in flight and a poll read queued behind it.
        case serving

        var testDescription: String { rawValue }
    }

    /// A fixture driven to `place`, with `q` queued; the time then.
    static func drive(to place: Where) throws -> (F, Double) {
        var f = try F(yaml: place == .serving ? Self.pollYAML : F.yaml)
        switch place {
        case .connecting:
            _ = f.step(.start, F.disconnected, at: 0)
            _ = f.receive(.slotGranted, F.disconnected, at: 0)
            #expect(f.core.link == nil)
        case .resolving:
            _ = f.step(.start, F.disconnected, at: 0)
            _ = f.receive(.slotGranted, F.disconnected, at: 0)
            _ = f.receive(.connectFinished(attempt: 1, error: nil), F.connected, at: 1)
            #expect(f.core.link?.setup.running == false)
        case .settingUp:
            f.driveToResolved()
            #expect(f.core.link?.setup.running == true)
        case .pairingInSetup:
            f.driveToResolved()
            let refusal = SessionInput.operationFinished(attempt: 1, .subscribed(try f.mapped("2a37"), error: Self.refused, acquired: false))
            f.expect(refusal, F.resolved, at: 2.1, ["Pair #1"])
            #expect(f.core.link?.pairing != nil && f.core.link?.setup.running == true)
        case .pairingForCommand:
            try f.driveToReady()
            f.expect(.command(F.get("g1", deadline: 30)), F.resolved, at: 3, ["read command 180f/2a19 #1"])
            let lost = CommandResult.failed(.read, error: CommandError(.notConnected, "refused"), transaction: nil)
            f.expect(
                .operationFinished(attempt: 1, .command(F.get("g1", deadline: 30), lost, readValue: nil, refusal: Self.refused)),
                F.resolved, at: 3.1, ["Pair #1"])
            guard case .command? = f.core.link?.pairing?.retry else {
                Issue.record("the refused command is the one to run again")
                return (f, 3.1)
            }
        case .serving:
            try f.driveToReady()
            f.expect(.command(F.get("g1", deadline: 30)), F.resolved, at: 7, ["read command 180f/2a19 #1"])
            f.expect(.deadline, F.resolved, at: 8, [])
            #expect(f.core.queue.work.count == 1, "the poll read waits behind the command")
        }
        let now = 8.5
        f.expect(.command(F.get("q", deadline: 30)), place == .connecting ? F.disconnected : F.resolved, at: now, [])
        return (f, now)
    }

    static func isWaiting(_ core: SessionCore) -> Bool {
        if case .waiting = core.phase { return true }
        return false
    }

    static func queuedReads(_ core: SessionCore) -> Int {
        core.queue.work.count { if case .read = $0 { true } else { false } }
    }

    @Test("a link loss in every phase: waiting, the link's setup and pairing gone, poll reads dropped, commands kept", arguments: Where.allCases)
    func linkLoss(_ place: Where) throws {
        var (f, now) = try Self.drive(to: place)
        let commands = f.core.queue.commandCount
        _ = f.receive(.connectedChanged(false), F.disconnected, at: now + 0.1)
        #expect(Self.isWaiting(f.core) && f.core.link == nil)
        #expect(Self.queuedReads(f.core) == 0, "poll reads are the link's")
        // A command that waited for the pairing goes back to the front of the queue.
        let expected = place == .pairingForCommand ? commands + 1 : commands
        #expect(f.core.queue.commandCount == expected, "commands wait for the next link or their deadline")
        if place == .pairingForCommand, case .command(let c)? = f.core.queue.work.first {
            #expect(c.transaction == .string("g1"))
        } else if place == .pairingForCommand {
            Issue.record("g1 is not first in the queue")
        }
        #expect(f.core.pairingFailure == nil && !f.core.pairingRunning, "nothing of the pairing of that link is left")
    }

    @Test("a stop in every phase: ended, every command answered not_connected (queued, in flight, waiting for its Pair), no link, nothing afterwards", arguments: Where.allCases)
    func stop(_ place: Where) throws {
        var (f, now) = try Self.drive(to: place)
        let commands = f.core.queue.commandCount
        #expect(commands >= 1)
        let actions = f.receive(.stop, F.resolved, at: now + 0.1)
        // The queued ones, and the one in flight or waiting for its Pair (its completion would come after the end).
        let answered = commands + (place == .serving || place == .pairingForCommand ? 1 : 0)
        #expect(actions.count { $0 == "respond 2a19 not_connected" } == answered, "\(actions)")
        #expect(actions.contains { $0.hasPrefix("shutDown") })
        #expect(f.core.ended && f.core.link == nil && f.core.queue.work.isEmpty)
        #expect(f.receive(.connectedChanged(false), F.disconnected, at: now + 1).isEmpty)
        #expect(f.receive(.command(F.get("late", deadline: 30)), F.disconnected, at: now + 2).isEmpty)
        #expect(f.core.ended)
    }

    @Test("the device removed in every phase: ended", arguments: Where.allCases)
    func deviceRemoved(_ place: Where) throws {
        var (f, now) = try Self.drive(to: place)
        // The link goes first (a command waiting for its Pair back in the queue), then the session ends.
        // The command in flight is answered too (its reply would come after the end).
        let commands = f.core.queue.commandCount + (place == .pairingForCommand || place == .serving ? 1 : 0)
        let actions = f.receive(.deviceRemoved, nil, at: now + 0.1)
        #expect(actions.count { $0 == "respond 2a19 not_connected" } == commands)
        #expect(f.core.ended && f.core.link == nil && f.core.queue.work.isEmpty)
        #expect(f.step(.deadline, nil, at: 60).isEmpty)
    }

    @Test("Pair for a refused subscription of the setup: back to setting up, the subscription again, the link paired")
    func pairingReturnsToSetup() throws {
        var (f, now) = try Self.drive(to: .pairingInSetup)
        f.expect(.pairFinished(attempt: 1, error: nil), F.resolved, at: now, ["report paired", "AcquireNotify 180d/2a37 #1"])
        #expect(f.core.link?.pairing == nil && f.core.link?.paired == true && f.core.link?.setup.running == true)
        #expect(!f.core.machine.isReady, "the setup goes on")
    }

    @Test("Pair for a refused command while serving: back to serving, the command again")
    func pairingReturnsToServing() throws {
        var (f, now) = try Self.drive(to: .pairingForCommand)
        f.expect(.pairFinished(attempt: 1, error: nil), F.resolved, at: now, ["report paired", "read command 180f/2a19 #1"])
        #expect(f.core.link?.pairing == nil && f.core.link?.paired == true && f.core.link?.setup.running == false)
        #expect(f.core.machine.isReady)
    }

    @Test("a failed Pair: this link's failure, gone with the link; the next link may pair again")
    func pairingFailureIsTheLinks() throws {
        var (f, now) = try Self.drive(to: .pairingInSetup)
        let wrong = BluetoothError(code: .authenticationFailed, name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")
        _ = f.receive(.pairFinished(attempt: 1, error: wrong), F.resolved, at: now)
        #expect(f.core.pairingFailure?.code == .authenticationFailed)
        #expect(!f.core.mayPair(after: Self.refused, SessionCore.Step(now: F.t(now), view: F.resolved)), "not again on this link")
        _ = f.receive(.connectedChanged(false), F.disconnected, at: now + 1)
        #expect(f.core.pairingFailure == nil && f.core.pairing.everFailed, "the session remembers; the link's failure went")
    }

    @Test("services changed while ready: a new link (still connected), its setup from the start, commands kept")
    func readinessLoss() throws {
        var f = try F()
        try f.driveToReady()
        #expect(f.core.link?.notifying.count == 2)
        _ = f.receive(.servicesResolved(false), F.connected, at: 4)
        #expect(f.core.link != nil && f.core.link?.notifying.isEmpty == true && f.core.link?.mappedPaths.isEmpty == true)
        f.expect(.command(F.get("q", deadline: 30)), F.connected, at: 4.5, [])
        let setup = f.receive(.servicesResolved(true), F.resolved, at: 5).filter { !$0.hasPrefix("route") }
        #expect(setup == ["AcquireNotify 180d/2a37 #2"], "the new link's setup, with its own attempt")
        #expect(f.core.queue.commandCount == 1)
    }
}

extension SessionCorePhaseTests {
    @Test("a resubscription queued behind a command is the link's: gone with it, not run again after the next link's setup")
    func resubscriptionGoesWithTheLink() throws {
        var f = try F()
        try f.driveToReady(acquired: true)
        let heartRate = try f.mapped("2a37").path
        f.expect(.command(F.get("g1", deadline: 30)), F.resolved, at: 10, ["read command 180f/2a19 #1"])
        f.expect(.notificationsReleased(characteristic: heartRate), F.resolved, at: 10, [])
        f.expect(.deadline, F.resolved, at: 11, [])
        #expect(f.core.queue.work.count == 1, "the resubscription waits behind g1")
        _ = f.receive(.connectedChanged(false), F.disconnected, at: 11.5)
        #expect(f.core.queue.work.isEmpty)
        let lost = CommandResult.failed(.read, error: CommandError(.notConnected, "gone"), transaction: nil)
        f.expect(
            .operationFinished(attempt: 1, .command(F.get("g1", deadline: 30), lost, readValue: nil)), F.disconnected, at: 11.6,
            ["respond 2a19 not_connected"])
        let retry = try #require(f.core.nextDeadline)
        #expect(f.step(.deadline, F.disconnected, now: retry) == ["requestSlot"])
        #expect(f.receive(.slotGranted, F.disconnected, now: retry) == ["connect #4"])
        _ = f.receive(.connectFinished(attempt: 4, error: nil), F.connected, at: 20)
        _ = f.receive(.servicesResolved(true), F.resolved, at: 21)
        _ = f.receive(try f.subscribed("2a37", attempt: 4, acquired: true), F.resolved, at: 22)
        _ = f.receive(try f.subscribed("2a19", attempt: 4, acquired: true), F.resolved, at: 22)
        _ = f.receive(try f.read("2a38", attempt: 4, [1]), F.resolved, at: 22)
        let done = f.receive(try f.read("2a19", attempt: 4, [90]), F.resolved, at: 22)
        #expect(f.core.machine.isReady)
        #expect(!done.contains { $0.contains("Notify") }, "no second subscription of 2a37: \(done)")
    }
}
