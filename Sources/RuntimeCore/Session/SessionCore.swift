import BridgeCore
import Logging

/// Every decision of one peripheral's session, as a pure value: inputs in, actions out.
///
/// The core owns the device's connection (a ``DeviceConnectionStateMachine``), its one GATT
/// queue (the setup of a link, then commands and polls in arrival order, one operation at
/// a time), command deadlines, poll cycles (``PollCycle``), availability, resubscriptions and
/// the GATT-quiet-period checks. It does no I/O, starts no task and reads no clock: the
/// executor (``PeripheralSession``) passes every input with the time and a copy of the device's
/// BlueZ objects (``DeviceView``), performs the ``Action``s returned, in order, and waits for the
/// next input until ``nextDeadline``.
///
/// Its ``phase`` (``SessionPhase``) is `waiting` (no link), `linked` or `ended`; `linked` carries
/// what belongs to that link only (``SessionLink``: its setup, subscriptions, poll timers, the
/// pairing in flight and this link's pairing outcome), so a loss of the link drops it whole and
/// nothing of one connection leaks into the next. What outlives a link is kept beside the phase:
/// the queued commands and the call in flight (``GattQueue``), the mapping, the GATT objects' times
/// (``GattObjectsWait``), the session's pairing memory (``PairingState``), availability and the
/// poll cycle. The phase follows the machine: it is `linked` exactly while the machine is
/// connected (a loss of readiness with the connection kept starts a new link), and `ended` once
/// stopped or removed.
///
/// Every BlueZ call is tagged with the connection attempt (``generation``) it belongs to; a
/// completion of an earlier attempt is dropped here, except what it teaches that must be kept
/// (a pairing refusal: real 5.66 drops the link before it sends the read's error reply).
package struct SessionCore<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    package typealias Machine = DeviceConnectionStateMachine<Instant>
    package typealias PendingCommand = RuntimeCore.PendingCommand<Instant>
    package typealias SessionInput = RuntimeCore.SessionInput<Instant>
    package typealias GattOperation = RuntimeCore.GattOperation<Instant>
    package typealias GattOutcome = RuntimeCore.GattOutcome<Instant>
    package typealias PollCycle = RuntimeCore.PollCycle<Instant>
    package typealias SessionDevice = RuntimeCore.SessionDevice<Instant>

    package let configuration: Configuration
    package var machine: Machine
    /// Incremented for every connection attempt and every loss of the link (or of readiness):
    /// completions of an older generation are stale.
    package var generation = 0
    /// The machine's next tick.
    package var tickAt: Instant?
    /// When the timers last ran (``nextDeadline`` keeps what is due after it; nil before the first step).
    package var timersCheckedAt: Instant?

    /// When the device's GATT objects may be mapped (the quiet period, the grace for missing services).
    package var gatt = GattObjectsWait<Instant>()

    /// Waiting for a link, linked (with what belongs to the link), or ended.
    package private(set) var phase: SessionPhase<Instant> = .waiting

    // Mapping
    /// The characteristics mapped on the last setup (kept between links: a `/set` payload is checked against them).
    package var characteristics: [MappedCharacteristic.Key: MappedCharacteristic] = [:]
    /// Characteristic UUIDs whose reads need pairing: never read.
    package var unreadable: Set<String>
    /// Device Information (180A) strings read so far.
    package var information = DeviceInformation()

    /// The one GATT queue's commands and polls (after the link's setup), and the one call in flight.
    package var queue = GattQueue<Instant>()
    /// What the session remembers of pairing across links (``SessionCore+Pairing``; the pairing in flight and this
    /// link's outcome are the link's).
    package var pairing = PairingState()
    /// When the device may pair again after a failed pairing (kept across connections, and sessions: SPEC §11).
    package var pairingRetry: PairingRetry<Instant>

    // Availability and policy
    package var available = false
    package var cycle = PollCycle()

    package init(configuration: Configuration) {
        self.configuration = configuration
        unreadable = configuration.device.unreadable
        pairingRetry = configuration.device.pairingRetry
        machine = Machine(configuration: configuration.machine, seed: configuration.device.seed)
    }

    package var device: SessionDevice { configuration.device }
    package var timing: SessionTiming { configuration.timing }
    package var isPoll: Bool {
        if case .poll = device.policy { return true }
        return false
    }

    /// The session ended (stopped, or its device object removed): every input is ignored.
    package var ended: Bool { phase.isEnded }

    /// The current link (nil while waiting or ended). Changes go to the phase's link; without one they are dropped
    /// (there is nothing of a link to change).
    package internal(set) var link: SessionLink<Instant>? {
        get { phase.link }
        // The link is taken out of the phase while it is changed, so that its dictionaries and arrays are held once
        // and change in place (a get and a set would copy each one changed). Without a link, changes are dropped; a
        // link is never replaced by nil here (the phase changes that).
        _modify {
            var value = takeLink()
            let had = value != nil
            defer { if had, let value { phase = .linked(value) } }
            yield &value
        }
    }

    /// The link, out of the phase (left `waiting` until it is put back); nil without one.
    private mutating func takeLink() -> SessionLink<Instant>? {
        guard case .linked(let link) = phase else { return nil }
        phase = .waiting
        return link
    }

    // MARK: Steps

    /// Handles one input at `now` (`wall`: the wall time then, which profile templates render), with the device's
    /// objects as they are (`device`: nil when BlueZ has no object for it), and returns what to do, in order.
    package mutating func handle(
        _ input: Input, device view: DeviceView?, now: Instant, wall: WallTime = WallTime(unix: 0)
    ) -> [Action] {
        guard !ended else { return [] }
        var s = Step(now: now, view: view, wall: wall)
        handle(input, &s)
        return s.actions
    }

    private mutating func handle(_ input: Input, _ s: inout Step) {
        switch input {
        case .start: start(&s)
        case .deadline: break
        case .mailboxFinished: stop(&s)
        case .received(let input): receive(input, &s)
        }
        if !ended { noteBond(&s) }
        if ended {
            // Every command gets its result: the one BlueZ has not answered (its reply would come to a session that
            // no longer listens) and those queued.
            if let c = queue.unansweredCommand {
                queue.markAnswered()
                fail(c, CommandError(
                    .notConnected, "the bridge stopped managing device '\(device.segment)' before BlueZ answered (it may have reached the device)"), &s)
            }
            failQueuedCommands(CommandError(.notConnected, "the bridge stopped managing device '\(device.segment)'"), &s)
        } else {
            fireTimers(&s)
            pump(&s)
            if isPoll {
                // The pump may have finished a cycle's reads.
                advanceCycle(&s)
                pump(&s)
            }
        }
    }

    /// When the executor must hand the core ``Input/deadline`` (nil: only an input moves it on).
    package var nextDeadline: Instant? {
        var deadlines: [Instant?] = [tickAt, gatt.checkAt, link?.resubscribeAt, cycle.nextDeadline(isPoll: isPoll)]
        deadlines.append(link?.pollDue.values.min())
        if let first = firstCommandDeadline() { deadlines.append(first) }
        deadlines.append(queue.run?.deadline)
        // A deadline that had passed when the timers last ran could not be acted on (a poll
        // cycle waiting for the last link to go down): an input wakes the loop for it, not a busy
        // loop. One that passed only since then is kept: the executor hands the deadline in at
        // once and the timers run (comparing with the clock now would lose it until the next input).
        let checked = timersCheckedAt
        return deadlines.compactMap { $0 }.filter { checked == nil || $0 > checked! }.min()
    }

    private mutating func start(_ s: inout Step) {
        let connected = s.view?.connected ?? false
        let resolved = s.view?.servicesResolved ?? false
        s.emit(.publishAvailability(false))
        let held = !connected && pairingRetry.holds(at: s.now)
        if held, let at = pairingRetry.notBefore {
            s.log(.notice, "\(device.address): \(pairingRetry.failures) failed pairing(s) before this session; not connecting before the next attempt in \(s.now.duration(to: at))")
        }
        if isPoll {
            cycle.nextAt = held ? pairingRetry.notBefore : s.now
            if connected { feed(.connectedChanged(true), &s) }
            return
        }
        if held, let at = pairingRetry.notBefore {
            feed(.holdOff(until: at), &s)
        } else if connected {
            feed(.connectedChanged(true), &s)
            if resolved { receive(.servicesResolved(true), &s) }
        } else {
            feed(device.connectNow ? .connectRequested : .discovered, &s)
        }
    }

    private mutating func receive(_ input: SessionInput, _ s: inout Step) {
        switch input {
        case .connectedChanged(let connected):
            feed(.connectedChanged(connected), &s)
        case .servicesResolved(let resolved):
            if resolved { gatt.resolved(at: s.now) }
            feed(.servicesResolved(resolved), &s)
            if resolved { checkGatt(&s) }
        case .gattObjectsChanged:
            gatt.objectAppeared(at: s.now, quietPeriod: timing.gattQuietPeriod)
        case .deviceRemoved:
            feed(.deviceRemoved, &s)
            phase = .ended
        case .connectRequested:
            // Not while a failed pairing's delay runs (a reconnect request ends it).
            guard !pairingRetry.holds(at: s.now) else { break }
            if isPoll { cycle.nextAt = s.now } else { feed(.connectRequested, &s) }
        case .reconnectRequested:
            resetPairingRetry(because: "a reconnect request", &s)
            if machine.isConnected || (s.view?.connected ?? false) {
                disconnect(&s)
            } else if !isPoll {
                feed(.connectRequested, &s)
            }
        case .command(let command):
            accept(command, &s)
        case .slotGranted:
            feed(.slotGranted, &s)
        case .connectFinished(let attempt, let error):
            connectFinished(attempt: attempt, error: error, &s)
        case .operationFinished(let attempt, let outcome):
            let answered = if case .command(_, answered: true) = queue.inFlight { true } else { false }
            queue.inFlight = nil
            finished(outcome, attempt: attempt, answeredAtDeadline: answered, &s)
        case .pairFinished(let attempt, let error):
            queue.inFlight = nil
            pairFinished(attempt: attempt, error: error, &s)
        case .stop:
            stop(&s)
        case .advertised:
            break  // advertisement sessions only
        case .notificationsReleased(let characteristic):
            notificationsReleased(characteristic, &s)
        case .notified(let path, let value, let attempt):
            profileNotified(path: path, value: value, attempt: attempt, &s)
        }
    }

    /// Stops notifications and disconnects (the executor runs it as one task that the
    /// supervisor's bound awaits), and ends the session.
    private mutating func stop(_ s: inout Step) {
        let wasConnected = machine.isConnected || (s.view?.connected ?? false)
        for action in machine.handle(.stopRequested, now: s.now) {
            switch action {
            case .publishAvailability, .releaseSlot: perform(action, &s)
            default: break
            }
        }
        setAvailable(false, &s)
        let link = self.link ?? SessionLink()
        phase = .ended
        // A command waiting for its pairing is answered with the queued ones.
        if case .command(let c)? = link.pairing?.retry { queue.work.insert(.command(c), at: 0) }
        let stopping = link.notifying.filter { link.acquired[$0] == nil }
        // Closing an acquired socket is BlueZ's StopNotify.
        for p in link.acquired.keys.sorted() { s.emit(.releaseNotify(characteristic: p)) }
        s.emit(.shutDown(stopNotify: stopping, disconnect: wasConnected))
    }

    // MARK: Timers

    private mutating func fireTimers(_ s: inout Step) {
        timersCheckedAt = s.now
        if let at = tickAt, at <= s.now {
            tickAt = nil
            feed(.tick, &s)
        }
        if let at = gatt.checkAt, at <= s.now {
            gatt.checkAt = nil
            checkGatt(&s)
        }
        if let at = link?.resubscribeAt, at <= s.now {
            link?.resubscribeAt = nil
            resubscribeReleased(&s)
        }
        expireCommands(&s)
        runTimers(&s)
        duePolls(&s)
        if isPoll { advanceCycle(&s) }
    }

    // MARK: The connection state machine

    package mutating func feed(_ event: Machine.Event, _ s: inout Step) {
        let wasConnected = machine.isConnected
        let wasReady = machine.isReady
        let before = machine.state
        let machineActions = machine.handle(event, now: s.now)
        if before != machine.state {
            s.log(.debug, "\(device.address): \(event) → \(Self.describe(machine.state, now: s.now))")
        }
        if wasReady && !machine.isReady { linkDown(keepMapping: machine.isConnected, &s) }
        if wasConnected && !machine.isConnected { linkDown(keepMapping: false, &s) }
        if !wasConnected && machine.isConnected && !ended { phase = .linked(SessionLink()) }
        for action in machineActions { perform(action, &s) }
        if wasConnected != machine.isConnected {
            s.emit(.report(.linkChanged(connected: machine.isConnected)))
        }
        if !wasReady && machine.isReady { becameReady(&s) }
    }

    private mutating func perform(_ action: Machine.Action, _ s: inout Step) {
        switch action {
        case .connect:
            generation += 1
            s.log(.info, "connecting to \(device.address)")
            s.emit(.connect(attempt: generation, timeout: timing.connectTimeout))
        case .disconnect:
            disconnect(&s)
        case .waitForDisconnect:
            s.log(.debug, "\(device.address): waiting for Connected=false before retrying")
        case .startSubscribing:
            startSetup(&s)
        case .publishAvailability(let online):
            if !isPoll { setAvailable(online, &s) }
        case .scheduleTick(let at):
            tickAt = at
        case .requestSlot:
            s.emit(.requestSlot)
        case .releaseSlot:
            s.emit(.releaseSlot)
        }
    }

    package mutating func disconnect(_ s: inout Step) {
        s.log(.info, "disconnecting \(device.address)")
        s.emit(.disconnect(attempt: generation))
    }

    private mutating func connectFinished(attempt: Int, error: BluetoothError?, _ s: inout Step) {
        s.emit(.report(.connectReturned))
        guard attempt == generation else {
            s.log(.debug, "dropping the reply of an earlier connection attempt (\(attempt), now \(generation))")
            return
        }
        guard let error, error.code != .alreadyConnected else {
            feed(.connectSucceeded, &s)
            return
        }
        s.log(.warning, "connect to \(device.address) failed: \(error)")
        feed(.connectFailed(ConnectErrorClass(errorName: error.name, message: error.message)), &s)
    }

    /// The link (or the readiness) went away: what it set up is void (`keepMapping`: still connected, a new link).
    private mutating func linkDown(keepMapping: Bool, _ s: inout Step) {
        generation += 1
        runLinkLost(&s)
        // A command that waited for a pairing goes back to the front of the queue (it keeps its deadline).
        if case .command(let command)? = link?.pairing?.retry {
            queue.work.insert(.command(command), at: 0)
        }
        queue.linkLost()
        if !ended { phase = keepMapping ? .linked(SessionLink()) : .waiting }
        if !keepMapping { gatt.checkAt = nil }
    }

    /// Publishes availability (and reports it) when it changes.
    package mutating func setAvailable(_ online: Bool, _ s: inout Step) {
        guard online != available else { return }
        available = online
        s.log(.info, "\(device.address) is \(online ? "online" : "offline")")
        s.emit(.publishAvailability(online))
        s.emit(.report(.availability(online)))
    }

    /// A state without its clock values, for logs.
    package static func describe(_ state: Machine.State, now: Instant) -> String {
        func inSeconds(_ i: Instant) -> String { i > now ? "in \(now.duration(to: i))" : "due" }
        switch state {
        case .idle: return "idle"
        case .waitingForSlot: return "waiting for a connection slot"
        case .connecting(let d): return "connecting (deadline \(inSeconds(d)))"
        case .resolving(let d): return "resolving services (deadline \(inSeconds(d)))"
        case .subscribing(let d): return "subscribing (deadline \(inSeconds(d)))"
        case .ready: return "ready"
        case .disconnecting(let d): return "waiting for disconnect (deadline \(inSeconds(d)))"
        case .backoff(let until): return "backing off, retry \(inSeconds(until))"
        case .stopped: return "stopped"
        }
    }
}
