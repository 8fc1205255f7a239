import BridgeCore
import Logging

/// Every decision of one peripheral's session, as a pure value: inputs in, actions out.
///
/// The core owns the device's connection (a ``DeviceConnectionStateMachine``), its one GATT
/// queue (the setup of a connection, then commands and polls in arrival order, one operation at
/// a time), command deadlines, poll cycles (``PollCycle``), availability, resubscriptions and
/// the GATT-quiet-period checks. It does no I/O, starts no task and reads no clock: the
/// executor (``PeripheralSession``) passes every input with the time and a copy of the device's
/// BlueZ objects (``DeviceView``), performs the ``Action``s returned, in order, and waits for the
/// next input until ``nextDeadline``.
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
    /// When the timers last ran (``nextDeadline`` keeps what is due after it).
    package var timersCheckedAt: Instant

    // GATT objects
    package var lastGattObjectAt: Instant?
    package var resolvedAt: Instant?
    package var gattCheckAt: Instant?
    package var reportedMissingServices = false

    // Mapping of the current connection
    package var characteristics: [MappedCharacteristic.Key: MappedCharacteristic] = [:]
    package var mappedPaths: Set<String> = []
    package var notifying: [String] = []
    /// Notifying through an `AcquireNotify` socket (a subset of ``notifying``).
    package var acquired: [String: MappedCharacteristic] = [:]
    /// Sockets that hung up while the link stayed: subscribed again at ``resubscribeAt`` if it still is.
    package var resubscribe: [MappedCharacteristic] = []
    package var resubscribeAt: Instant?
    /// Characteristic UUIDs whose reads need pairing: never read.
    package var unreadable: Set<String>
    package var pollDue: [String: Instant] = [:]
    /// Device Information (180A) strings read so far.
    package var information = DeviceInformation()

    // The GATT queue
    package var setupQueue: [GattOperation] = []
    package var workQueue: [GattOperation] = []
    package var commandCount = 0
    package var inFlight = false
    /// The command whose BlueZ call is in flight, and whether it was answered already (its
    /// deadline passed first: ``expireCommands()``; BlueZ's late reply is then not answered again).
    package var inFlightCommand: PendingCommand?
    package var inFlightAnswered = false
    package var setupRunning = false
    package var subscribeAttempts = 0
    package var subscribeFailures = 0
    /// Pairing when an operation is refused for lack of it (``SessionCore+Pairing``).
    package var pairing = PairingState()
    /// When the device may pair again after a failed pairing (kept across connections, and sessions: SPEC §11).
    package var pairingRetry: PairingRetry<Instant>

    // Availability and policy
    package var available = false
    package var cycle = PollCycle()
    /// The session ended (stopped, or its device object removed): every input is ignored.
    package var ended = false

    // The step being handled
    /// The time of the input being handled.
    package var now: Instant
    /// The device's objects when the input being handled came.
    package var view: DeviceView?
    /// The actions of the input being handled.
    package var actions: [Action] = []

    package init(configuration: Configuration, now: Instant) {
        self.now = now
        timersCheckedAt = now
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

    // MARK: Steps

    /// Handles one input at `now`, with the device's objects as they are (`device`: nil when
    /// BlueZ has no object for it), and returns what to do, in order.
    package mutating func handle(_ input: Input, device view: DeviceView?, now: Instant) -> [Action] {
        guard !ended else { return [] }
        self.now = now
        self.view = view
        switch input {
        case .start: start()
        case .deadline: break
        case .mailboxFinished: stop()
        case .received(let input): receive(input)
        }
        if !ended { noteBond() }
        if ended {
            failQueuedCommands(CommandError(.notConnected, "the bridge stopped managing device '\(device.segment)'"))
        } else {
            fireTimers()
            pump()
            if isPoll {
                // The pump may have finished a cycle's reads.
                advanceCycle()
                pump()
            }
        }
        self.view = nil
        let result = actions
        actions.removeAll()
        return result
    }

    /// When the executor must hand the core ``Input/deadline`` (nil: only an input moves it on).
    package var nextDeadline: Instant? {
        var deadlines: [Instant?] = [tickAt, gattCheckAt, resubscribeAt, cycle.nextDeadline(isPoll: isPoll)]
        deadlines.append(pollDue.values.min())
        if let first = firstCommandDeadline() { deadlines.append(first) }
        // A deadline that had passed when the timers last ran could not be acted on (a poll
        // cycle waiting for the last link to go down): an input wakes the loop for it, not a busy
        // loop. One that passed only since then is kept: the executor hands the deadline in at
        // once and the timers run (comparing with the clock now would lose it until the next input).
        let checked = timersCheckedAt
        return deadlines.compactMap { $0 }.filter { $0 > checked }.min()
    }

    package mutating func emit(_ action: Action) { actions.append(action) }

    package mutating func log(_ level: Logger.Level, _ message: String) { actions.append(.log(level, message)) }

    private mutating func start() {
        let connected = view?.connected ?? false
        let resolved = view?.servicesResolved ?? false
        emit(.publishAvailability(false))
        let held = !connected && pairingRetry.holds(at: now)
        if held, let at = pairingRetry.notBefore {
            log(.notice, "\(device.address): \(pairingRetry.failures) failed pairing(s) before this session; not connecting before the next attempt in \(now.duration(to: at))")
        }
        if isPoll {
            cycle.nextAt = held ? pairingRetry.notBefore : now
            if connected { feed(.connectedChanged(true)) }
            return
        }
        if held, let at = pairingRetry.notBefore {
            feed(.holdOff(until: at))
        } else if connected {
            feed(.connectedChanged(true))
            if resolved { receive(.servicesResolved(true)) }
        } else {
            feed(device.connectNow ? .connectRequested : .discovered)
        }
    }

    private mutating func receive(_ input: SessionInput) {
        switch input {
        case .connectedChanged(let connected):
            feed(.connectedChanged(connected))
        case .servicesResolved(let resolved):
            if resolved {
                resolvedAt = now
                reportedMissingServices = false
            }
            feed(.servicesResolved(resolved))
            if resolved { checkGatt() }
        case .gattObjectsChanged:
            lastGattObjectAt = now
            gattCheckAt = now.advanced(by: timing.gattQuietPeriod)
        case .deviceRemoved:
            feed(.deviceRemoved)
            ended = true
        case .connectRequested:
            // Not while a failed pairing's delay runs (a reconnect request ends it).
            guard !pairingRetry.holds(at: now) else { break }
            if isPoll { cycle.nextAt = now } else { feed(.connectRequested) }
        case .reconnectRequested:
            resetPairingRetry(because: "a reconnect request")
            if machine.isConnected || (view?.connected ?? false) {
                disconnect()
            } else if !isPoll {
                feed(.connectRequested)
            }
        case .command(let command):
            accept(command)
        case .slotGranted:
            feed(.slotGranted)
        case .connectFinished(let attempt, let error):
            connectFinished(attempt: attempt, error: error)
        case .operationFinished(let attempt, let outcome):
            inFlight = false
            finished(outcome, attempt: attempt)
        case .pairFinished(let attempt, let error):
            inFlight = false
            pairFinished(attempt: attempt, error: error)
        case .stop:
            stop()
        case .advertised:
            break  // advertisement sessions only
        case .notificationsReleased(let characteristic):
            notificationsReleased(characteristic)
        }
    }

    /// Stops notifications and disconnects (the executor runs it as one task that the
    /// supervisor's bound awaits), and ends the session.
    private mutating func stop() {
        let wasConnected = machine.isConnected || (view?.connected ?? false)
        for action in machine.handle(.stopRequested, now: now) {
            switch action {
            case .publishAvailability, .releaseSlot: perform(action)
            default: break
            }
        }
        setAvailable(false)
        ended = true
        let stopping = notifying.filter { acquired[$0] == nil }
        // Closing an acquired socket is BlueZ's StopNotify.
        for p in acquired.keys.sorted() { emit(.releaseNotify(characteristic: p)) }
        acquired.removeAll()
        emit(.shutDown(stopNotify: stopping, disconnect: wasConnected))
    }

    // MARK: Timers

    private mutating func fireTimers() {
        timersCheckedAt = now
        if let at = tickAt, at <= now {
            tickAt = nil
            feed(.tick)
        }
        if let at = gattCheckAt, at <= now {
            gattCheckAt = nil
            checkGatt()
        }
        if let at = resubscribeAt, at <= now {
            resubscribeAt = nil
            resubscribeReleased()
        }
        expireCommands()
        duePolls()
        if isPoll { advanceCycle() }
    }

    // MARK: The connection state machine

    package mutating func feed(_ event: Machine.Event) {
        let wasConnected = machine.isConnected
        let wasReady = machine.isReady
        let before = machine.state
        let machineActions = machine.handle(event, now: now)
        if before != machine.state {
            log(.debug, "\(device.address): \(event) → \(Self.describe(machine.state, now: now))")
        }
        if wasReady && !machine.isReady { linkDown(keepMapping: machine.isConnected) }
        if wasConnected && !machine.isConnected { linkDown(keepMapping: false) }
        for action in machineActions { perform(action) }
        if wasConnected != machine.isConnected {
            emit(.report(.linkChanged(connected: machine.isConnected)))
        }
        if !wasReady && machine.isReady { becameReady() }
    }

    private mutating func perform(_ action: Machine.Action) {
        switch action {
        case .connect:
            generation += 1
            log(.info, "connecting to \(device.address)")
            emit(.connect(attempt: generation, timeout: timing.connectTimeout))
        case .disconnect:
            disconnect()
        case .waitForDisconnect:
            log(.debug, "\(device.address): waiting for Connected=false before retrying")
        case .startSubscribing:
            startSetup()
        case .publishAvailability(let online):
            if !isPoll { setAvailable(online) }
        case .scheduleTick(let at):
            tickAt = at
        case .requestSlot:
            emit(.requestSlot)
        case .releaseSlot:
            emit(.releaseSlot)
        }
    }

    package mutating func disconnect() {
        log(.info, "disconnecting \(device.address)")
        emit(.disconnect(attempt: generation))
    }

    private mutating func connectFinished(attempt: Int, error: BluetoothError?) {
        emit(.report(.connectReturned))
        guard attempt == generation else {
            log(.debug, "dropping the reply of an earlier connection attempt (\(attempt), now \(generation))")
            return
        }
        guard let error, error.code != .alreadyConnected else {
            feed(.connectSucceeded)
            return
        }
        log(.warning, "connect to \(device.address) failed: \(error)")
        feed(.connectFailed(ConnectErrorClass(errorName: error.name, message: error.message)))
    }

    /// The link (or the readiness) went away: setup of that connection is void.
    private mutating func linkDown(keepMapping: Bool) {
        generation += 1
        // A command that waited for a pairing goes back to the front of the queue (it keeps its deadline).
        if pairing.running, case .command(let command)? = pairing.retry {
            workQueue.insert(.command(command), at: 0)
            commandCount += 1
        }
        resetPairingForConnection()
        setupQueue.removeAll()
        workQueue.removeAll { if case .read = $0 { return true } else { return false } }
        setupRunning = false
        pollDue.removeAll()
        notifying.removeAll()
        acquired.removeAll()
        resubscribe.removeAll()
        resubscribeAt = nil
        mappedPaths.removeAll()
        if !keepMapping { gattCheckAt = nil }
    }

    /// Publishes availability (and reports it) when it changes.
    package mutating func setAvailable(_ online: Bool) {
        guard online != available else { return }
        available = online
        log(.info, "\(device.address) is \(online ? "online" : "offline")")
        emit(.publishAvailability(online))
        emit(.report(.availability(online)))
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
