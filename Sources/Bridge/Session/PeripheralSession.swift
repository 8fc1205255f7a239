import BlueZ
import BridgeCore
import RuntimeCore
import Logging

/// One peripheral's session: the executor of its ``SessionCore``, which holds every decision
/// (connection, topic routes, readiness, the one GATT operation queue, command deadlines, poll
/// cycles). Initial reads, subscriptions, polls, `/get` and `/set` all pass through that queue in
/// order, one at a time.
///
/// The session is a loop over its ``Mailbox``: inputs from the supervisor (BlueZ changes of its
/// device), from command intake (commands), from the slot pool and from its own child tasks (the
/// replies of BlueZ calls). Each input goes into the core with the time and a copy of the
/// device's BlueZ objects; the actions that come out are performed here, BlueZ calls as child
/// tasks of the loop's task group (ending or cancelling the session cancels them) whose
/// replies come back through the mailbox, tagged with their connection attempt. The loop waits
/// for the next input until the core's next deadline.
final class PeripheralSession {
    let io: SessionIO
    let device: SessionDevice
    let mailbox: Mailbox<SessionInput>
    let logger: Logger
    let availabilityTopic: String
    /// `{base}/{device}/values` (SPEC §15), for a device with a profile.
    let valuesTopic: String
    private(set) var core: SessionCore

    init(context: RuntimeContext, device: SessionDevice, mailbox: Mailbox<SessionInput>) {
        io = context.io
        self.device = device
        self.mailbox = mailbox
        var logger = context.logger
        logger[metadataKey: "device"] = "\(device.segment)"
        self.logger = logger
        availabilityTopic = context.topics.availability(device: device.segment)
        valuesTopic = context.topics.values(device: device.segment)
        core = SessionCore(configuration: SessionCore.Configuration(
            config: context.config, topics: context.topics, timing: context.timing, device: device))
    }

    var path: String { device.path }

    /// Runs until ``SessionInput/stop`` or ``SessionInput/deviceRemoved``, or until cancelled.
    func run() async {
        await withDiscardingTaskGroup { group in
            step(.start, &group)
            while !core.ended {
                switch await mailbox.receive(until: core.nextDeadline, clock: io.clock) {
                case .input(let input): step(.received(input), &group)
                case .deadline: step(.deadline, &group)
                case .finished: step(.mailboxFinished, &group)
                }
            }
        }
        io.router.removeRoutes(below: path)
    }

    /// Feeds one input into the core and performs what it decided.
    private func step(_ input: SessionCore.Input, _ group: inout DiscardingTaskGroup) {
        // Only a profile's templates read the wall time.
        let wall = device.profile != nil ? LocalWallTime.at(io.clock.unixTime) : WallTime(unix: 0)
        let actions = core.handle(input, device: deviceView(), now: io.clock.now, wall: wall)
        for action in actions { perform(action, &group) }
    }

    /// The device's objects in BlueZ's tree now.
    private func deviceView() -> SessionCore.DeviceView? {
        guard let objects = io.central.deviceObjects(path) else { return nil }
        let services = objects.services.map { s in
            SessionCore.DeviceView.Service(
                path: s.service.path, uuid: s.service.uuid,
                characteristics: s.characteristics.map { c in
                    var ch = SessionCore.DeviceView.Characteristic(
                        path: c.characteristic.path, uuid: c.characteristic.uuid, properties: c.characteristic.properties)
                    for d in c.descriptors {
                        if d.uuid == PresentationFormat.descriptorUUID { ch.presentationFormat = d.path }
                        if d.uuid == UserDescription.descriptorUUID { ch.userDescription = d.path }
                    }
                    return ch
                })
        }
        let d = objects.device
        return SessionCore.DeviceView(
            connected: d.connected, servicesResolved: d.servicesResolved, uuids: d.uuids, name: d.name,
            services: services, paired: d.paired || d.bonded)
    }

    private func perform(_ action: SessionCore.Action, _ group: inout DiscardingTaskGroup) {
        let central = io.central, mailbox = self.mailbox, path = self.path, logger = self.logger
        switch action {
        case .connect(let attempt, let timeout):
            group.addTask {
                do throws(BlueZError) {
                    try await central.connect(device: path, timeout: timeout)
                    mailbox.send(.connectFinished(attempt: attempt, error: nil))
                } catch {
                    mailbox.send(.connectFinished(attempt: attempt, error: BluetoothError(error)))
                }
            }
        case .disconnect:
            group.addTask {
                do { try await central.disconnect(device: path) } catch {
                    logger.debug("disconnect: \(error)")
                }
            }
        case .subscribe(let mc, let acquire, let attempt):
            group.addTask {
                let outcome = await SessionCalls.subscribe(central, mc, acquire: acquire, logger: logger)
                mailbox.send(.operationFinished(attempt: attempt, outcome))
            }
        case .read(let mc, let initial, let attempt):
            group.addTask {
                let outcome = await SessionCalls.read(central, mc, initial: initial, device: path)
                mailbox.send(.operationFinished(attempt: attempt, outcome))
            }
        case .readDescriptor(let mc, let kind, let descriptor, let attempt):
            group.addTask {
                let outcome = await SessionCalls.readDescriptor(central, mc, kind, path: descriptor)
                mailbox.send(.operationFinished(attempt: attempt, outcome))
            }
        case .command(let job, let attempt):
            group.addTask {
                let outcome = await SessionCalls.run(central, job)
                mailbox.send(.operationFinished(attempt: attempt, outcome))
            }
        case .pair(let attempt, let timeout):
            group.addTask {
                do throws(BlueZError) {
                    try await central.pair(device: path, timeout: timeout)
                } catch {
                    mailbox.send(.pairFinished(attempt: attempt, error: BluetoothError(error)))
                    return
                }
                do throws(BlueZError) { try await central.setTrusted(device: path, true) } catch {
                    logger.notice("paired, but Trusted = true failed: \(error)")
                }
                mailbox.send(.pairFinished(attempt: attempt, error: nil))
            }
        case .trust:
            group.addTask {
                do throws(BlueZError) { try await central.setTrusted(device: path, true) } catch {
                    logger.notice("Trusted = true failed: \(error)")
                }
            }
        case .pairingRetry(let retry):
            io.pairingHolds.record(retry, for: device.address)
        case .releaseNotify(let characteristic):
            central.releaseNotify(characteristic: characteristic)
        case .shutDown(let notifying, let disconnect):
            group.addTask {
                for p in notifying { try? await central.stopNotify(characteristic: p) }
                guard disconnect else { return }
                do { try await central.disconnect(device: path) } catch {
                    logger.debug("disconnect: \(error)")
                }
            }
        case .publishAvailability(let online):
            io.broker.publish(availabilityTopic, text: online ? "online" : "offline", retain: true)
        case .publishRead(let characteristic, let value):
            io.router.publishRead(path: characteristic, value: value)
        case .route(let characteristic, let topic, let format):
            io.router.setRoute(path: characteristic, topic: topic, format: format, device: device.segment)
        case .present(let characteristic, let presentation):
            io.router.setPresentation(path: characteristic, presentation)
        case .respond(let command, let result):
            io.responder.finish(command, result)
        case .report(let report):
            io.supervisor.send(.session(path: path, report))
        case .requestSlot:
            io.slots.request(path, mailbox: mailbox)
        case .releaseSlot:
            io.slots.release(path)
        case .log(let level, let message):
            logger.log(level: level, "\(message)")
        case .profileCall(let call, let attempt):
            group.addTask {
                let outcome = await SessionCalls.profileCall(central, call, device: path)
                mailbox.send(.operationFinished(attempt: attempt, outcome))
            }
        case .publishValues(let profile, let values):
            io.router.publish(
                topic: valuesTopic, payload: ProfileValuesPayload.make(profile: profile, values: values), device: device.segment,
                at: io.clock.now)
        case .armNotify(let characteristic, let attempt):
            io.router.arm(path: characteristic) { value in
                mailbox.send(.notified(path: characteristic, value: value, attempt: attempt))
            }
        case .disarmNotify(let paths):
            for p in paths { io.router.disarm(path: p) }
        case .routeDecode(let characteristic, let decode, let profile):
            io.router.setDecode(path: characteristic, decode, valuesTopic: valuesTopic, profile: profile)
        }
    }
}
