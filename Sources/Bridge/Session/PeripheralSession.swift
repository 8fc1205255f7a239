import BlueZ
import BridgeCore
import Logging

/// One peripheral's session: it owns the device's connection (a ``DeviceConnectionStateMachine``),
/// its topic routes, its readiness and its one GATT operation queue. Initial reads, subscriptions,
/// polls, `/get` and `/set` all pass through that queue in order, one at a time.
///
/// The session is a loop over its ``Mailbox``: inputs from the supervisor (BlueZ changes of its
/// device), from command intake (commands), from the slot pool and from its own child tasks (the
/// replies of BlueZ calls). Timers are deadlines the loop waits on. BlueZ calls run as child tasks
/// of the loop's task group, so ending the session (or cancelling it) cancels them.
///
/// Every completion carries the connection attempt it belongs to; setup completions of an earlier
/// attempt are dropped. State lives only here; what others need is written to the
/// ``DeviceRegistry`` entry and reported to the supervisor.
final class PeripheralSession {
    typealias Machine = DeviceConnectionStateMachine<BridgeInstant>

    let ctx: SessionContext
    let device: SessionDevice
    let mailbox: Mailbox<SessionInput>
    var logger: Logger

    var machine: Machine
    /// Incremented for every connection attempt and every re-mapping: completions of an older
    /// generation are stale.
    var generation = 0
    /// The machine's next tick.
    var tickAt: BridgeInstant?
    /// When the timers last ran (``nextDeadline()`` keeps what is due after it).
    var timersCheckedAt = BridgeInstant(offset: .zero)

    // GATT objects
    var lastGattObjectAt: BridgeInstant?
    var resolvedAt: BridgeInstant?
    var gattCheckAt: BridgeInstant?
    var reportedMissingServices = false

    // Mapping of the current connection
    var characteristics: [MappedCharacteristic.Key: MappedCharacteristic] = [:]
    var mappedPaths: Set<String> = []
    var notifying: [String] = []
    /// Notifying through an `AcquireNotify` socket (a subset of ``notifying``).
    var acquired: [String: MappedCharacteristic] = [:]
    /// Sockets that hung up while the link stayed: subscribed again at this time if it still is.
    var resubscribe: [MappedCharacteristic] = []
    var resubscribeAt: BridgeInstant?
    var unreadable: Set<String>
    var pollDue: [String: BridgeInstant] = [:]
    /// Device Information (180A) strings read so far.
    var information = DeviceInformation()

    // The GATT queue
    var setupQueue: [GattOperation] = []
    var workQueue: [GattOperation] = []
    var commandCount = 0
    var inFlight = false
    var setupRunning = false
    var subscribeAttempts = 0
    var subscribeFailures = 0

    // Availability and policy
    var available = false
    var cycle = PollCycle()
    var ended = false

    init(context: SessionContext, device: SessionDevice, mailbox: Mailbox<SessionInput>) {
        ctx = context
        self.device = device
        self.mailbox = mailbox
        unreadable = device.unreadable
        var logger = context.logger
        logger[metadataKey: "device"] = "\(device.segment)"
        self.logger = logger
        var configuration = Machine.Configuration(reconnect: context.config.reconnect, usesSlots: true)
        configuration.connectTimeout = context.timing.connectTimeout
        machine = Machine(configuration: configuration, seed: device.seed)
    }

    var now: BridgeInstant { ctx.clock.now }
    var path: String { device.path }
    var isPoll: Bool {
        if case .poll = device.policy { return true }
        return false
    }

    // MARK: Loop

    /// Runs until ``SessionInput/stop`` or ``SessionInput/deviceRemoved``, or until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            start(&group)
            while !ended {
                fireTimers(&group)
                pump(&group)
                if isPoll {
                    // The pump may have finished a cycle's reads.
                    advanceCycle(&group)
                    pump(&group)
                }
                if ended { break }
                switch await mailbox.receive(until: nextDeadline(), clock: ctx.clock) {
                case .input(let input):
                    handle(input, &group)
                case .deadline:
                    break
                case .finished:
                    if !ended { stop(&group) }
                }
            }
            failQueuedCommands(CommandError(.notConnected, "the bridge stopped managing device '\(device.segment)'"))
        }
        ctx.router.removeRoutes(below: path)
    }

    private func start(_ group: inout DiscardingTaskGroup) {
        let (connected, resolved) = ctx.central.withTree { t in
            (t.device(path)?.connected ?? false, t.device(path)?.servicesResolved ?? false)
        }
        ctx.broker.publish(ctx.topics.availability(device: device.segment), text: "offline", retain: true)
        if isPoll {
            cycle.nextAt = now
            if connected { feed(.connectedChanged(true), &group) }
            return
        }
        if connected {
            feed(.connectedChanged(true), &group)
            if resolved { handle(.servicesResolved(true), &group) }
        } else {
            feed(device.connectNow ? .connectRequested : .discovered, &group)
        }
    }

    func handle(_ input: SessionInput, _ group: inout DiscardingTaskGroup) {
        switch input {
        case .connectedChanged(let connected):
            feed(.connectedChanged(connected), &group)
        case .servicesResolved(let resolved):
            if resolved {
                resolvedAt = now
                reportedMissingServices = false
            }
            feed(.servicesResolved(resolved), &group)
            if resolved { checkGatt(&group) }
        case .gattObjectsChanged:
            lastGattObjectAt = now
            gattCheckAt = now.advanced(by: ctx.timing.gattQuietPeriod)
        case .deviceRemoved:
            feed(.deviceRemoved, &group)
            ended = true
        case .connectRequested:
            if isPoll { cycle.nextAt = now } else { feed(.connectRequested, &group) }
        case .reconnectRequested:
            if machine.isConnected || ctx.central.withTree({ $0.device(path)?.connected ?? false }) {
                disconnect(&group)
            } else if !isPoll {
                feed(.connectRequested, &group)
            }
        case .command(let command):
            accept(command, &group)
        case .slotGranted:
            feed(.slotGranted, &group)
        case .connectFinished(let attempt, let error):
            connectFinished(attempt: attempt, error: error, &group)
        case .operationFinished(let attempt, let outcome):
            inFlight = false
            finished(outcome, attempt: attempt, &group)
        case .stop:
            stop(&group)
        case .advertised:
            break  // advertisement sessions only
        case .notificationsReleased(let characteristic):
            notificationsReleased(characteristic)
        }
    }

    /// Disconnects (stopping notifications first) and ends the loop; the child tasks doing it
    /// are awaited by the task group, which the supervisor bounds.
    private func stop(_ group: inout DiscardingTaskGroup) {
        let wasConnected = machine.isConnected || ctx.central.withTree { $0.device(path)?.connected ?? false }
        let actions = machine.handle(.stopRequested, now: now)
        for a in actions {
            switch a {
            case .publishAvailability, .releaseSlot: perform(a, &group)
            default: break
            }
        }
        setAvailable(false)
        ended = true
        let acquired = self.acquired
        let notifying = self.notifying.filter { acquired[$0] == nil }
        let central = ctx.central, devicePath = self.path, logger = self.logger
        // Closing an acquired socket is BlueZ's StopNotify.
        for p in acquired.keys { central.releaseNotify(characteristic: p) }
        self.acquired.removeAll()
        group.addTask {
            for p in notifying { try? await central.stopNotify(characteristic: p) }
            guard wasConnected else { return }
            do { try await central.disconnect(device: devicePath) } catch {
                logger.debug("disconnect: \(error)")
            }
        }
    }

    // MARK: Timers

    func nextDeadline() -> BridgeInstant? {
        var deadlines: [BridgeInstant?] = [tickAt, gattCheckAt, resubscribeAt, cycle.nextDeadline(isPoll: isPoll)]
        deadlines.append(pollDue.values.min())
        if let first = firstCommandDeadline() { deadlines.append(first) }
        // A deadline that had passed when the timers last ran could not be acted on (a poll
        // cycle waiting for the last link to go down): an input wakes the loop for it, not a busy
        // loop. One that passed only since then is kept: the receive returns at once and the
        // timers run (comparing with the clock now would lose it until the next input).
        let checked = timersCheckedAt
        return deadlines.compactMap { $0 }.filter { $0 > checked }.min()
    }

    private func fireTimers(_ group: inout DiscardingTaskGroup) {
        let now = self.now
        timersCheckedAt = now
        if let at = tickAt, at <= now {
            tickAt = nil
            feed(.tick, &group)
        }
        if let at = gattCheckAt, at <= now {
            gattCheckAt = nil
            checkGatt(&group)
        }
        if let at = resubscribeAt, at <= now {
            resubscribeAt = nil
            resubscribeReleased()
        }
        expireCommands()
        duePolls()
        if isPoll { advanceCycle(&group) }
    }

    // MARK: The connection state machine

    func feed(_ event: Machine.Event, _ group: inout DiscardingTaskGroup) {
        let wasConnected = machine.isConnected
        let wasReady = machine.isReady
        let before = machine.state
        let actions = machine.handle(event, now: now)
        if before != machine.state {
            logger.debug("\(device.address): \(event) → \(Self.describe(machine.state, now: now))")
        }
        if wasReady && !machine.isReady { linkDown(keepMapping: machine.isConnected) }
        if wasConnected && !machine.isConnected { linkDown(keepMapping: false) }
        for action in actions { perform(action, &group) }
        if wasConnected != machine.isConnected {
            let up = machine.isConnected
            ctx.registry.update(path: path) { e in
                e.connected = up
                if up { e.connects += 1 }
            }
            ctx.supervisor.send(.session(path: path, .linkChanged(connected: up)))
        }
        if !wasReady && machine.isReady { becameReady() }
    }

    private func perform(_ action: Machine.Action, _ group: inout DiscardingTaskGroup) {
        switch action {
        case .connect:
            generation += 1
            let attempt = generation
            logger.info("connecting to \(device.address)")
            let central = ctx.central, path = self.path, mailbox = self.mailbox
            let timeout = ctx.timing.connectTimeout
            group.addTask {
                do throws(BlueZError) {
                    try await central.connect(device: path, timeout: timeout)
                    mailbox.send(.connectFinished(attempt: attempt, error: nil))
                } catch {
                    mailbox.send(.connectFinished(attempt: attempt, error: error))
                }
            }
        case .disconnect:
            disconnect(&group)
        case .waitForDisconnect:
            logger.debug("\(device.address): waiting for Connected=false before retrying")
        case .startSubscribing:
            startSetup()
        case .publishAvailability(let online):
            if !isPoll { setAvailable(online) }
        case .scheduleTick(let at):
            tickAt = at
        case .requestSlot:
            ctx.slots.request(path, mailbox: mailbox)
        case .releaseSlot:
            ctx.slots.release(path)
        }
    }

    func disconnect(_ group: inout DiscardingTaskGroup) {
        logger.info("disconnecting \(device.address)")
        let central = ctx.central, path = self.path, logger = self.logger
        group.addTask {
            do { try await central.disconnect(device: path) } catch {
                logger.debug("disconnect: \(error)")
            }
        }
    }

    private func connectFinished(attempt: Int, error: BlueZError?, _ group: inout DiscardingTaskGroup) {
        ctx.supervisor.send(.session(path: path, .connectReturned))
        guard attempt == generation else {
            logger.debug("dropping the reply of an earlier connection attempt (\(attempt), now \(generation))")
            return
        }
        guard let error, error.code != .alreadyConnected else {
            feed(.connectSucceeded, &group)
            return
        }
        logger.warning("connect to \(device.address) failed: \(error)")
        feed(.connectFailed(ConnectErrorClass(errorName: error.name, message: error.message)), &group)
    }

    /// The link (or the readiness) went away: setup of that connection is void.
    private func linkDown(keepMapping: Bool) {
        generation += 1
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

    /// Publishes availability when it changes.
    func setAvailable(_ online: Bool) {
        guard online != available else { return }
        available = online
        logger.info("\(device.address) is \(online ? "online" : "offline")")
        ctx.broker.publish(ctx.topics.availability(device: device.segment), text: online ? "online" : "offline", retain: true)
        ctx.registry.update(path: path) { $0.available = online }
        ctx.supervisor.send(.session(path: path, .availability(online)))
    }
}
