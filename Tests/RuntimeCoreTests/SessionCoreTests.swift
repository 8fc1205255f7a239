import BridgeCore
import Testing

@testable import RuntimeCore

/// ``SessionCore`` driven directly: inputs with explicit times, the exact actions asserted.
@Suite struct SessionCoreTests {
    typealias F = SessionCoreFixture
    static let routes = ["route ble/strap/180d/2a37", "route ble/strap/180d/2a38", "route ble/strap/180f/2a19"]
    static let mapped = "report mapped [\"180d/2a37\", \"180d/2a38\", \"180f/2a19\"] services [\"180d\", \"180f\"]"

    @Test("connect, services resolved, GATT mapped, then the setup one call at a time: subscriptions, then reads")
    func connectAndSetUp() throws {
        var f = try F()
        f.expect(.start, F.disconnected, at: 0, ["availability offline", "requestSlot"])
        #expect(f.core.nextDeadline == nil, "nothing to wait for but the slot")
        f.expect(.slotGranted, F.disconnected, at: 0, ["connect #1"])
        #expect(f.core.nextDeadline == F.t(30), "the connect timeout")
        f.expect(.connectFinished(attempt: 1, error: nil), F.connected, at: 1, ["report connectReturned", "report link up"])
        f.expect(.servicesResolved(true), F.resolved, at: 2, Self.routes + ["AcquireNotify 180d/2a37 #1"])
        f.expect(try f.subscribed("2a37", attempt: 1), F.resolved, at: 2.1, ["AcquireNotify 180f/2a19 #1"])
        f.expect(try f.subscribed("2a19", attempt: 1), F.resolved, at: 2.2, ["ReadValue 180d/2a38 #1"])
        f.expect(try f.read("2a38", attempt: 1, [1]), F.resolved, at: 2.3, ["publishRead 180d/2a38 [1]", "ReadValue 180f/2a19 #1"])
        f.expect(try f.read("2a19", attempt: 1, [90]), F.resolved, at: 2.4, [
            "publishRead 180f/2a19 [90]", Self.mapped, "availability online", "report availability true",
        ])
        #expect(f.core.machine.isReady)
        #expect(f.core.link?.notifying.count == 2)
        #expect(!f.core.queue.busy && f.core.link?.setup.operations.isEmpty == true && f.core.queue.work.isEmpty)
    }

    @Test("GATT objects still appearing: the mapping waits for the quiet period")
    func quietPeriod() throws {
        var f = try F()
        _ = f.step(.start, F.disconnected, at: 0)
        _ = f.receive(.slotGranted, F.disconnected, at: 0)
        _ = f.receive(.connectFinished(attempt: 1, error: nil), F.connected, at: 1)
        f.expect(.gattObjectsChanged, F.resolved, at: 1.9, [])
        f.expect(.servicesResolved(true), F.resolved, at: 2, [])
        #expect(f.core.nextDeadline == F.t(2.15), "250 ms after the last object")
        f.expect(.deadline, F.resolved, at: 2.15, Self.routes + ["AcquireNotify 180d/2a37 #1"])
    }

    @Test("completions of an earlier attempt are dropped; an acquired socket of one is closed")
    func staleCompletions() throws {
        var f = try F()
        f.driveToResolved()
        f.expect(try f.subscribed("2a37", attempt: 1), F.resolved, at: 2.1, ["AcquireNotify 180f/2a19 #1"])
        // The link drops while 2a19's subscription is in flight.
        f.expect(.connectedChanged(false), F.disconnected, at: 3, ["releaseSlot", "report link down"])
        #expect(f.core.link == nil, "no link: its setup and subscriptions went with it")
        f.expect(try f.subscribed("2a19", attempt: 1, acquired: true), F.disconnected, at: 3.1, ["releaseNotify 180f/2a19"])
        #expect(f.core.link == nil, "the stale socket is not this link's")
        // A StartNotify BlueZ took for that connection is stopped (bluetoothd would keep the session for the next
        // one and refuse its AcquireNotify with InProgress, as the real stack did).
        f.expect(try f.subscribed("2a37", attempt: 1), F.disconnected, at: 3.15, ["shutDown stopNotify [\"180d/2a37\"] disconnect false"])
        // The backoff ends: a new attempt.
        let retry = try #require(f.core.nextDeadline)
        #expect(retry > F.t(3.5) && retry < F.t(5), "about a second of backoff")
        #expect(f.step(.deadline, F.disconnected, now: retry) == ["requestSlot"])
        #expect(f.receive(.slotGranted, F.disconnected, now: retry) == ["connect #3"])
        // The first attempt's Connect reply and read come late: only the reply is reported.
        f.expect(.connectFinished(attempt: 1, error: nil), F.connected, at: 5.1, ["report connectReturned"])
        #expect(!f.core.machine.isConnected, "still connecting: the late reply is not this attempt's")
        f.expect(try f.read("2a38", attempt: 1, [7]), F.connected, at: 5.2, [])
        f.expect(.connectFinished(attempt: 3, error: nil), F.connected, at: 5.3, ["report connectReturned", "report link up"])
    }

    @Test("a read refused while connected: Pair, then the read once more; refused again after pairing: not a second pairing")
    func refusalPairsAndRetriesOnce() throws {
        var f = try F()
        f.driveToResolved()
        _ = f.receive(try f.subscribed("2a37", attempt: 1), F.resolved, at: 2)
        f.expect(try f.subscribed("2a19", attempt: 1), F.resolved, at: 2, ["ReadValue 180d/2a38 #1"])
        let refused = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0f")
        f.expect(
            .operationFinished(attempt: 1, .read(try f.mapped("2a38"), initial: true, .failure(refused), linkDropped: false)),
            F.resolved, at: 2.1, ["Pair #1"])
        f.expect(.pairFinished(attempt: 1, error: nil), F.resolved, at: 2.5, ["report paired", "ReadValue 180d/2a38 #1"])
        f.expect(
            .operationFinished(attempt: 1, .read(try f.mapped("2a38"), initial: true, .failure(refused), linkDropped: false)),
            F.resolved, at: 2.6, ["report unreadable \(BluetoothUUID("2a38")!.uuidString)", "ReadValue 180f/2a19 #1"])
    }

    /// `view` with `Device1.Paired` true.
    static func paired(_ view: SessionCore.DeviceView) -> SessionCore.DeviceView {
        var v = view
        v.paired = true
        return v
    }

    @Test("real 5.66: BlueZ pairs on its own (Just Works) when a read needs encryption: logged once, trusted, reported; a read refused although bonded is not paired for and not read again")
    func refusedDespiteBond() throws {
        let yaml = F.yaml + "\n    pairing: just_works\n"
        var f = try F(yaml: yaml)
        f.driveToResolved()
        _ = f.receive(try f.subscribed("2a37", attempt: 1), F.resolved, at: 2)
        f.expect(try f.subscribed("2a19", attempt: 1), F.resolved, at: 2, ["ReadValue 180d/2a38 #1"])
        // The read succeeded after bluetoothd paired inline: the device shows Paired from here on.
        let bonded = Self.paired(F.resolved)
        f.expect(try f.read("2a38", attempt: 1, [1]), bonded, at: 2.2, ["publishRead 180d/2a38 [1]", "trust", "report paired", "ReadValue 180f/2a19 #1"])
        // Once per session: nothing more on the next input.
        let refused = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e")
        // 2a19 asks for more than the bond gives (5.66 drops the link): no Pair, now or on the next connection.
        _ = f.receive(.connectedChanged(false), Self.paired(F.disconnected), at: 3)
        f.expect(
            .operationFinished(attempt: 1, .read(try f.mapped("2a19"), initial: true, .failure(refused), linkDropped: true)),
            Self.paired(F.disconnected), at: 3.1, [])
        #expect(!f.core.pairing.onConnect, "no pairing on the next connection: the device is bonded")
        #expect(f.core.unreadable == [BluetoothUUID("2a19")!.uuidString], "remembered for this session (just_works: not in the state file)")
        _ = f.step(.deadline, Self.paired(F.disconnected), at: 10)
        _ = f.receive(.slotGranted, Self.paired(F.disconnected), at: 10)
        _ = f.receive(.connectFinished(attempt: 3, error: nil), Self.paired(F.connected), at: 11)
        let setup = f.receive(.servicesResolved(true), bonded, at: 12).filter { !$0.hasPrefix("route") }
        #expect(setup == ["AcquireNotify 180d/2a37 #3"], "no Pair, no second trust")
        _ = f.receive(try f.subscribed("2a37", attempt: 3), bonded, at: 13)
        f.expect(try f.subscribed("2a19", attempt: 3), bonded, at: 13, ["ReadValue 180d/2a38 #3"])
        let done = f.receive(try f.read("2a38", attempt: 3, [1]), bonded, at: 13.1)
        #expect(done.contains("publishRead 180d/2a38 [1]") && !done.contains("ReadValue 180f/2a19 #3"), "2a19 is not read again: \(done)")
    }

    @Test("a read refused while connected and bonded (pairing: none): no Pair, remembered in the state file")
    func refusedWhileBondedNone() throws {
        var f = try F()
        f.driveToResolved()
        let bonded = Self.paired(F.resolved)
        _ = f.receive(try f.subscribed("2a37", attempt: 1), bonded, at: 2)
        _ = f.receive(try f.subscribed("2a19", attempt: 1), bonded, at: 2)
        let refused = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x05")
        f.expect(
            .operationFinished(attempt: 1, .read(try f.mapped("2a38"), initial: true, .failure(refused), linkDropped: false)),
            bonded, at: 2.1, ["report unreadable \(BluetoothUUID("2a38")!.uuidString)", "ReadValue 180f/2a19 #1"])
    }

    @Test("a command queued behind the setup runs after it and is answered")
    func commandBehindSetup() throws {
        var f = try F()
        f.driveToResolved()
        f.expect(.command(F.get("g1", deadline: 12)), F.resolved, at: 2, [])
        #expect(f.core.nextDeadline == F.t(12), "the command's deadline")
        f.expect(try f.subscribed("2a37", attempt: 1), F.resolved, at: 2.1, ["AcquireNotify 180f/2a19 #1"])
        f.expect(try f.subscribed("2a19", attempt: 1), F.resolved, at: 2.2, ["ReadValue 180d/2a38 #1"])
        f.expect(try f.read("2a38", attempt: 1, [1]), F.resolved, at: 2.3, ["publishRead 180d/2a38 [1]", "ReadValue 180f/2a19 #1"])
        let actions = f.core.handle(.received(try f.read("2a19", attempt: 1, [90])), device: F.resolved, now: F.t(2.4))
        #expect(actions.compactMap(F.line) == [
            "publishRead 180f/2a19 [90]", Self.mapped, "availability online", "report availability true",
            "read command 180f/2a19 #1",
        ])
        let job = try #require(actions.compactMap { if case .command(let job, _) = $0 { job } else { nil } }.first)
        #expect(job.timeout == .milliseconds(9600), "only the time left before the deadline")
        let result = CommandResult.readSucceeded(raw: [88], format: job.format, transaction: job.transaction)
        f.expect(
            .operationFinished(attempt: 1, .command(job.command, result, readValue: ReadValue(path: job.path, value: [88]))),
            F.resolved, at: 2.5, ["publishRead 180f/2a19 [88]", "respond 2a19 ok"])
        #expect(f.core.nextDeadline != F.t(12), "nothing waits for the answered command")
    }

    @Test("a command whose deadline passes in the queue is answered timeout and never sent")
    func commandDeadline() throws {
        var f = try F()
        try f.driveToReady()
        f.expect(.command(F.get("g1", deadline: 13)), F.resolved, at: 3, ["read command 180f/2a19 #1"])
        f.expect(.command(F.get("g2", deadline: 5)), F.resolved, at: 3, [])
        f.expect(.command(F.get("g3", deadline: 6)), F.resolved, at: 3, [])
        #expect(f.core.nextDeadline == F.t(5))
        f.expect(.deadline, F.resolved, at: 5, ["respond 2a19 timeout"])
        #expect(f.core.nextDeadline == F.t(6))
        // g1 finishes with 30 ms left for g3: too little to send it.
        let g1 = CommandResult.readSucceeded(raw: [1], format: .hex, transaction: nil)
        f.expect(
            .operationFinished(attempt: 1, .command(F.get("g1", deadline: 13), g1, readValue: nil)), F.resolved, at: 5.97,
            ["respond 2a19 ok", "respond 2a19 timeout"])
        #expect(f.core.queue.work.isEmpty && f.core.queue.commandCount == 0 && !f.core.queue.busy)
        f.expect(.deadline, F.resolved, at: 30, [])
    }

    @Test("the command in flight is answered timeout at its deadline, before the commands queued behind it; BlueZ's late reply is not answered again")
    func inFlightDeadline() throws {
        var f = try F()
        try f.driveToReady()
        f.expect(.command(F.get("g1", deadline: 5)), F.resolved, at: 3, ["read command 180f/2a19 #1"])
        f.expect(.command(F.get("g2", deadline: 5.001)), F.resolved, at: 3.001, [])
        #expect(f.core.nextDeadline == F.t(5), "the deadline of the command in flight")
        // BlueZ has not answered g1 by its deadline (its own call timeout reports later on a busy
        // machine): g1 is answered now, g2 at its own deadline, in their order.
        f.expect(.deadline, F.resolved, at: 5, ["respond 2a19 timeout"])
        #expect(f.core.nextDeadline == F.t(5.001))
        f.expect(.deadline, F.resolved, at: 5.001, ["respond 2a19 timeout"])
        let late = CommandResult.readSucceeded(raw: [1], format: .hex, transaction: nil)
        let lateActions = f.core.handle(
            .received(.operationFinished(attempt: 1, .command(F.get("g1", deadline: 5), late, readValue: nil))), device: F.resolved,
            now: F.t(5.2))
        #expect(lateActions.compactMap(F.line) == [])
        // The log says when BlueZ answered.
        let logged = lateActions.compactMap { if case .log(_, let line) = $0 { line } else { nil } }
        #expect(logged == ["BlueZ answered the read of 180f/2a19 on strap 0.2 seconds after the command's deadline; its result said timeout"], "\(logged)")
        #expect(f.core.queue.work.isEmpty && f.core.queue.commandCount == 0 && !f.core.queue.busy)
        #expect(f.core.queue.inFlight == nil)
        // The next command is sent and answered as usual.
        f.expect(.command(F.get("g3", deadline: 20)), F.resolved, at: 6, ["read command 180f/2a19 #1"])
        f.expect(
            .operationFinished(attempt: 1, .command(F.get("g3", deadline: 20), late, readValue: nil)), F.resolved, at: 6.1,
            ["respond 2a19 ok"])
    }

    @Test("a full queue answers busy; a malformed /set with nothing before it is answered at once")
    func commandAdmission() throws {
        var f = try F()
        try f.driveToReady()
        f.expect(.command(F.get("g0", deadline: 13)), F.resolved, at: 3, ["read command 180f/2a19 #1"])
        for n in 1...4 { f.expect(.command(F.get("g\(n)", deadline: 13)), F.resolved, at: 3, []) }
        f.expect(.command(F.get("g5", deadline: 13)), F.resolved, at: 3, ["respond 2a19 busy"])
        var g = try F()
        try g.driveToReady()
        let get = F.get("s1", deadline: 13)
        let set = PendingCommand(
            payload: Array("zz".utf8), replyTo: nil, device: get.device, service: get.service,
            characteristic: get.characteristic, operation: .set, resultTopic: get.resultTopic, deadline: get.deadline)
        g.expect(.command(set), F.resolved, at: 3, ["respond 2a19 invalid_payload"])
    }

    @Test("losing the link voids the setup and the polls; queued commands wait for their deadline")
    func linkLoss() throws {
        var f = try F()
        try f.driveToReady()
        f.expect(.command(F.get("g1", deadline: 13)), F.resolved, at: 3, ["read command 180f/2a19 #1"])
        f.expect(.command(F.get("g2", deadline: 13)), F.resolved, at: 3, [])
        f.expect(.connectedChanged(false), F.disconnected, at: 4, [
            "availability offline", "report availability false", "releaseSlot", "report link down",
        ])
        #expect(f.core.link == nil, "no link: its setup, subscriptions and mapped paths went with it")
        #expect(f.core.queue.commandCount == 1, "the queued command stays")
        // The command in flight was sent: answered whatever happened to the link.
        let lost = CommandResult.failed(.read, error: CommandError(.notConnected, "gone"), transaction: nil)
        f.expect(
            .operationFinished(attempt: 1, .command(F.get("g1", deadline: 13), lost, readValue: nil)), F.disconnected, at: 4.1,
            ["respond 2a19 not_connected"])
        // At its deadline the link is still down (the retry waits for a slot): not connected.
        f.expect(.deadline, F.disconnected, at: 13, ["requestSlot", "respond 2a19 not_connected"])
        #expect(f.core.queue.work.isEmpty)
    }

    @Test("stop closes sockets, stops notifications, disconnects, and answers the command in flight and those queued")
    func stop() throws {
        var f = try F()
        try f.driveToReady(acquired: true)
        f.expect(.command(F.get("g1", deadline: 13)), F.resolved, at: 3, ["read command 180f/2a19 #1"])
        f.expect(.command(F.get("g2", deadline: 13)), F.resolved, at: 3, [])
        f.expect(.stop, F.resolved, at: 4, [
            "availability offline", "report availability false", "releaseSlot", "releaseNotify 180d/2a37",
            "releaseNotify 180f/2a19", "shutDown stopNotify [] disconnect true", "respond 2a19 not_connected",
            "respond 2a19 not_connected",
        ])
        #expect(f.core.ended)
        // BlueZ's late reply to g1 comes to a session that ended: nothing more.
        let late = CommandResult.readSucceeded(raw: [1], format: .hex, transaction: nil)
        f.expect(.operationFinished(attempt: 1, .command(F.get("g1", deadline: 13), late, readValue: nil)), F.resolved, at: 4.5, [])
        f.expect(.connectedChanged(false), F.disconnected, at: 5, [])
    }

    @Test("a slow poll cycle whose listening runs past the next cycle's start still ends its listening (the stale start does not hide it)")
    func slowPollCycleStillStopsListening() throws {
        // interval 4 s, listen 2 s, the reads done only at 3 s: listening until 5 s, the next cycle due at 4 s.
        var f = try F(policy: .poll(interval: .seconds(4), listen: .seconds(2)))
        f.expect(.start, F.disconnected, at: 0, ["availability offline", "requestSlot"])
        f.expect(.slotGranted, F.disconnected, at: 0, ["connect #1"])
        f.expect(.connectFinished(attempt: 1, error: nil), F.connected, at: 1, ["report connectReturned", "report link up"])
        f.expect(.servicesResolved(true), F.resolved, at: 2, Self.routes + ["AcquireNotify 180d/2a37 #1"])
        f.expect(try f.subscribed("2a37", attempt: 1), F.resolved, at: 2, ["AcquireNotify 180f/2a19 #1"])
        f.expect(try f.subscribed("2a19", attempt: 1), F.resolved, at: 2, ["ReadValue 180d/2a38 #1"])
        f.expect(try f.read("2a38", attempt: 1, [1]), F.resolved, at: 3, ["publishRead 180d/2a38 [1]", "ReadValue 180f/2a19 #1"])
        f.expect(try f.read("2a19", attempt: 1, [90]), F.resolved, at: 3, [
            "publishRead 180f/2a19 [90]", Self.mapped, "availability online", "report availability true",
        ])
        #expect(f.core.cycle.phase == .listening(until: F.t(5)))
        #expect(f.core.cycle.nextAt == F.t(4))
        // The timers run at 4 s (another deadline, an input): listening goes on, and its end stays a deadline.
        f.expect(.deadline, F.resolved, at: 4, [])
        #expect(f.core.nextDeadline == F.t(5), "listening ends at 5 s: \(String(describing: f.core.nextDeadline))")
        f.expect(.deadline, F.resolved, at: 5, ["disconnect #2"])
    }

    @Test("a poll cycle connects, reads, listens, lets go, and starts again at its interval")
    func pollCycle() throws {
        var f = try F(policy: .poll(interval: .seconds(60), listen: .seconds(10)))
        f.expect(.start, F.disconnected, at: 0, ["availability offline", "requestSlot"])
        f.expect(.slotGranted, F.disconnected, at: 0, ["connect #1"])
        f.expect(.connectFinished(attempt: 1, error: nil), F.connected, at: 1, ["report connectReturned", "report link up"])
        f.expect(.servicesResolved(true), F.resolved, at: 2, Self.routes + ["AcquireNotify 180d/2a37 #1"])
        f.expect(try f.subscribed("2a37", attempt: 1), F.resolved, at: 2, ["AcquireNotify 180f/2a19 #1"])
        f.expect(try f.subscribed("2a19", attempt: 1), F.resolved, at: 2, ["ReadValue 180d/2a38 #1"])
        f.expect(try f.read("2a38", attempt: 1, [1]), F.resolved, at: 3, ["publishRead 180d/2a38 [1]", "ReadValue 180f/2a19 #1"])
        f.expect(try f.read("2a19", attempt: 1, [90]), F.resolved, at: 3, [
            "publishRead 180f/2a19 [90]", Self.mapped, "availability online", "report availability true",
        ])
        #expect(f.core.cycle.phase == .listening(until: F.t(13)))
        #expect(f.core.nextDeadline == F.t(13), "listening ends")
        f.expect(.deadline, F.resolved, at: 13, ["disconnect #2"])
        #expect(f.core.cycle.phase == .waiting)
        f.expect(.connectedChanged(false), F.disconnected, at: 14, ["releaseSlot", "report link down"])
        #expect(f.core.available, "a poll device stays online between cycles")
        f.expect(.deadline, F.disconnected, at: 60, ["requestSlot"])
        #expect(f.core.cycle.isRunning)
        #expect(f.core.cycle.nextAt == F.t(120))
    }

    @Test("a poll cycle that cannot connect fails after the usual attempts and goes offline")
    func pollCycleFails() throws {
        var f = try F(policy: .poll(interval: .seconds(60), listen: .zero))
        _ = f.step(.start, F.disconnected, at: 0)
        // Availability online first: a cycle that worked.
        f.core.available = true
        let refused = BluetoothError(code: .other, name: "org.bluez.Error.Failed", message: "le-connection-abort-by-remote")
        var at = F.t(0)
        for attempt in [1, 2, 3] {
            #expect(f.receive(.slotGranted, F.disconnected, now: at) == ["connect #\(attempt)"])
            at = at.advanced(by: .milliseconds(500))
            let actions = f.receive(.connectFinished(attempt: attempt, error: refused), F.disconnected, now: at)
            if attempt < 3 {
                #expect(actions == ["report connectReturned", "releaseSlot"])
                // The backoff ends: the cycle's next attempt.
                at = try #require(f.core.nextDeadline)
                #expect(f.step(.deadline, F.disconnected, now: at) == ["requestSlot"])
            } else {
                #expect(actions == ["report connectReturned", "releaseSlot", "availability offline", "report availability false"])
            }
        }
        #expect(f.core.cycle.phase == .waiting)
        #expect(f.core.machine.state == .idle)
    }

    @Test("a notification socket that hangs up while the link stays is subscribed again a second later")
    func resubscribe() throws {
        var f = try F()
        try f.driveToReady(acquired: true)
        let heartRate = try f.mapped("2a37").path
        f.expect(.notificationsReleased(characteristic: heartRate), F.resolved, at: 10, [])
        #expect(f.core.link?.notifying.contains(heartRate) == false)
        #expect(f.core.nextDeadline == F.t(11))
        f.expect(.deadline, F.resolved, at: 11, ["AcquireNotify 180d/2a37 #1"])
        f.expect(try f.subscribed("2a37", attempt: 1, acquired: true), F.resolved, at: 11.1, [])
        #expect(f.core.link?.notifying.contains(heartRate) == true && f.core.link?.acquired[heartRate] != nil)
    }

    @Test("a socket that hangs up with the link going down is not subscribed again")
    func noResubscribeAfterLinkLoss() throws {
        var f = try F()
        try f.driveToReady(acquired: true)
        let heartRate = try f.mapped("2a37").path
        f.expect(.notificationsReleased(characteristic: heartRate), F.resolved, at: 10, [])
        _ = f.receive(.connectedChanged(false), F.disconnected, at: 10.5)
        #expect(f.core.link?.resubscribeAt == nil)
        let actions = f.step(.deadline, F.disconnected, at: 11)
        #expect(!actions.contains { $0.contains("Notify") })
    }

    @Test("poll intervals queue reads once ready, one at a time with commands")
    func pollIntervals() throws {
        let yaml = F.yaml + """

                characteristics:
                  - { uuid: "2a19", poll: 5s }
            """
        var f = try F(yaml: yaml)
        try f.driveToReady()
        #expect(f.core.nextDeadline == F.t(8), "5 s after ready")
        f.expect(.command(F.get("g1", deadline: 13)), F.resolved, at: 7, ["read command 180f/2a19 #1"])
        f.expect(.deadline, F.resolved, at: 8, [])
        let g1 = CommandResult.readSucceeded(raw: [1], format: .hex, transaction: nil)
        f.expect(
            .operationFinished(attempt: 1, .command(F.get("g1", deadline: 13), g1, readValue: nil)), F.resolved, at: 8.5,
            ["respond 2a19 ok", "poll ReadValue 180f/2a19 #1"])
    }
}
