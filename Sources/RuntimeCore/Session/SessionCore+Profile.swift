import BridgeCore

/// Running a device profile's steps (SPEC §15) in the one GATT queue: the connection steps at the end of a link's
/// setup, and named commands. A run (``ProfileRun``) is one queue item: its steps start one at a time, each BlueZ
/// call tagged with the connection attempt; waits (`wait_notify`, `sleep`, a command's `expect`) are deadlines of the
/// core. Any failure ends the run: a connection run ends the connection attempt (a warning names the step and its
/// line), a command run is answered with the error.
extension SessionCore {
    /// The characteristic mapped with `uuid` on this connection (the first by path when several services carry it).
    package func mapped(_ uuid: BluetoothUUID) -> MappedCharacteristic? {
        characteristics.values.filter { $0.uuid == uuid }.min { $0.path < $1.path }
    }

    /// Starts a run of the device's profile: its connection steps, or a command's.
    package mutating func startRun(_ purpose: ProfileRun<Instant>.Purpose, parameters: [String: JSONValue] = [:], _ s: inout Step) {
        guard let binding = device.profile else { return }
        let steps: [ProfileStep]
        switch purpose {
        case .connection: steps = binding.steps
        case .command(_, let command): steps = command.steps
        }
        if case .connection = purpose, steps.isEmpty { return }
        queue.run = ProfileRun(purpose: purpose, steps: steps, parameters: parameters)
        advanceRun(&s)
    }

    /// Starts the run's next steps until one waits (a call, a notification, a sleep) or the run ends.
    package mutating func advanceRun(_ s: inout Step) {
        while let run = queue.run, run.waiting == nil {
            if run.answered { return endRun(nil, &s) }
            guard let step = run.step else { return stepsDone(&s) }
            guard let binding = device.profile else { return endRun(CommandError(.unknownCommand, "the device has no profile"), &s) }
            guard let uuid = step.characteristic else {
                armAhead(&s)
                if case .sleep(let d) = step.action { queue.run?.waiting = .sleep(until: s.now.advanced(by: d)) }
                return
            }
            guard let mc = mapped(uuid) else {
                return endRun(CommandError(.unknownCharacteristic, "the device has no characteristic \(uuid.shortForm)"), &s)
            }
            armAhead(&s)
            switch step.action {
            case .write(_, let template, let response):
                let bytes: [UInt8]
                do throws(ProfileCodecError) {
                    bytes = try template.render(.init(
                        unixTime: s.wall.unix, utcOffset: s.wall.utcOffset, options: binding.options, parameters: run.parameters))
                } catch {
                    return endRun(CommandError(error.commandErrorCode ?? .invalidPayload, "\(error)"), &s)
                }
                let type: GattWriteType
                do throws(CommandError) {
                    type = try WriteTypeDecision.writeType(properties: mc.properties, response: response, configured: mc.writeTypes)
                } catch {
                    return endRun(error, &s)
                }
                return call(ProfileCall(path: mc.path, bytes: bytes, type: type, timeout: .zero), &s)
            case .read:
                do throws(CommandError) { try WriteTypeDecision.checkReadable(properties: mc.properties) } catch { return endRun(error, &s) }
                return call(ProfileCall(path: mc.path, bytes: nil, type: .request, timeout: .zero), &s)
            case .subscribe(_, let decode):
                if let decode, let d = binding.profile.decodes[decode] {
                    s.emit(.routeDecode(path: mc.path, d, profile: binding.id))
                }
                if link?.notifying.contains(mc.path) ?? false {
                    queue.run?.index += 1
                    continue
                }
                guard mc.canNotify else {
                    return endRun(CommandError(.gattError, "\(mc.key.service)/\(mc.key.characteristic) does not notify"), &s)
                }
                queue.inFlight = .operation
                queue.run?.waiting = .call
                s.emit(.subscribe(mc, acquire: mc.properties.contains(.notify) && configuration.acquireNotify, attempt: generation))
                return
            case .waitNotify(_, let timeout, _):
                arm(mc.path, &s)
                if let value = queue.run?.take(mc.path) {
                    guard stepNotified(value, &s) else { return }
                    continue
                }
                queue.run?.waiting = .notify(path: mc.path, until: s.now.advanced(by: timeout))
                return
            case .sleep:
                return
            }
        }
    }

    /// A profile call of the step running, with the time left before the run's deadline.
    private mutating func call(_ call: ProfileCall, _ s: inout Step) {
        var call = call
        guard let left = runTimeLeft(s), left >= Self.minimumCallTime else {
            return endRun(CommandError(.timeout, "no time left before the deadline for \(queue.run?.stepDescription ?? "the step")"), &s)
        }
        call.timeout = left
        queue.inFlight = .operation
        queue.run?.waiting = .call
        s.emit(.profileCall(call, attempt: generation))
    }

    /// The time left before the run's deadline: the command's, or the setup's (nil: none left).
    private func runTimeLeft(_ s: Step) -> Duration? {
        let deadline: Instant?
        if let command = queue.run?.command {
            deadline = command.deadline
        } else if case .subscribing(let d) = machine.state {
            deadline = d
        } else {
            deadline = nil
        }
        guard let deadline else { return configuration.machine.subscribeTimeout }
        let left = s.now.duration(to: deadline)
        return left > .zero ? left : nil
    }

    /// Arms the path the run will wait on next: a `wait_notify` after this step (and the sleeps after it), or the
    /// command's `expect` when this step is the command's last write. The device may notify before the call's reply
    /// comes.
    private mutating func armAhead(_ s: inout Step) {
        guard let run = queue.run else { return }
        var next = run.index + 1
        while next < run.steps.count, case .sleep = run.steps[next].action { next += 1 }
        if next < run.steps.count, case .waitNotify(let uuid, _, _) = run.steps[next].action, let mc = mapped(uuid) {
            arm(mc.path, &s)
        }
        if case .command(_, let command) = run.purpose, let expect = command.expect,
            case .write = run.steps[run.index].action,
            !run.steps[(run.index + 1)...].contains(where: { if case .write = $0.action { true } else { false } }),
            let mc = mapped(expect.characteristic)
        {
            arm(mc.path, &s)
        }
    }

    private mutating func arm(_ path: String, _ s: inout Step) {
        guard queue.run?.armed.insert(path).inserted == true else { return }
        s.emit(.armNotify(path: path, attempt: generation))
    }

    /// Every step ran: a connection run is done, a command waits for its answer if it expects one.
    private mutating func stepsDone(_ s: inout Step) {
        guard let run = queue.run else { return }
        guard case .command(_, let command) = run.purpose, let expect = command.expect else { return endRun(nil, &s) }
        guard let mc = mapped(expect.characteristic) else {
            return endRun(CommandError(.unknownCharacteristic, "the device has no characteristic \(expect.characteristic.shortForm)"), &s)
        }
        arm(mc.path, &s)
        queue.run?.waiting = .expect(path: mc.path, until: s.now.advanced(by: expect.timeout ?? .seconds(5)))
        while queue.run != nil, let value = queue.run?.take(mc.path) { answered(value, expect, &s) }
    }

    /// A notification while the command waits for its answer: `ok` is success, another listed name the error it
    /// names; one the expect does not list is kept and the wait goes on (``ProfileRun/unlisted``).
    private mutating func answered(_ value: [UInt8], _ expect: ProfileExpect, _ s: inout Step) {
        let hex = Hex.encode(value)
        do {
            let name = try expect.answer(for: value)
            if name == ProfileExpect.ok { return endRun(nil, &s) }
            endRun(CommandError(.gattError, "the device answered \(name) (\(hex))", answer: name), &s)
        } catch {
            s.log(.debug, "command \(queue.run?.command?.profileCommand ?? ""): \(hex) is no answer the expect lists; waiting on")
            queue.run?.unlisted.append(value)
        }
    }

    /// A notification for the running `wait_notify` step: decoded (when it names a decode) and published; the run
    /// goes on with the next step. Returns false when the run ended.
    private mutating func stepNotified(_ value: [UInt8], _ s: inout Step) -> Bool {
        queue.run?.waiting = nil
        guard publishDecoded(value, &s) else { return false }
        queue.run?.index += 1
        return true
    }

    /// Decodes `value` by the running step's decode, if it names one, and publishes the values; ends the run and
    /// returns false when it does not decode.
    private mutating func publishDecoded(_ value: [UInt8], _ s: inout Step) -> Bool {
        guard let binding = device.profile, let name = queue.run?.step?.decode else { return true }
        guard let decode = binding.profile.decodes[name] else {
            endRun(CommandError(.unexpectedAnswer, "the profile has no decode \(name)"), &s)
            return false
        }
        do {
            s.emit(.publishValues(profile: binding.id, try decode.decode(value)))
            return true
        } catch {
            endRun(CommandError(.unexpectedAnswer, "\(Hex.encode(value)) does not decode as \(name): \(error)"), &s)
            return false
        }
    }

    /// A BlueZ call of the run finished (a profile call, or a subscribe step's subscription).
    package mutating func profileOutcome(_ outcome: GattOutcome, attempt: Int, _ s: inout Step) {
        guard attempt == generation, queue.run != nil else {
            return s.log(.debug, "a profile step's call of an earlier connection finished: dropped")
        }
        queue.run?.waiting = nil
        if queue.run?.answered == true { return endRun(nil, &s) }
        switch outcome {
        case .profileCall(.success(let value), _):
            if queue.run?.step.map({ if case .read = $0.action { true } else { false } }) == true {
                guard publishDecoded(value, &s) else { return }
            }
        case .profileCall(.failure(let error), _):
            return endRun(error, &s)
        case .subscribed(let mc, let error, let viaSocket):
            if viaSocket { link?.acquired[mc.path] = mc }
            if let error { return endRun(CommandError(.gattError, "StartNotify failed: \(error)"), &s) }
            link?.notifying.append(mc.path)
        default:
            break
        }
        queue.run?.index += 1
        advanceRun(&s)
    }

    /// A notification of an armed path: taken by the wait for it, or kept for a later one.
    package mutating func profileNotified(path: String, value: [UInt8], attempt: Int, _ s: inout Step) {
        guard attempt == generation, let run = queue.run, run.armed.contains(path) else { return }
        switch run.waiting {
        case .notify(let p, _) where p == path:
            if stepNotified(value, &s) { advanceRun(&s) }
        case .expect(let p, _) where p == path:
            guard case .command(_, let command) = run.purpose, let expect = command.expect else { return }
            answered(value, expect, &s)
        default:
            if queue.run?.buffer(value, path: path) == true {
                s.log(.debug, "more than \(ProfileRun<Instant>.bufferLimit) notifications of \(path) waiting: the oldest dropped")
            }
        }
    }

    /// The run's waits that ended by now: a sleep goes on, a `wait_notify` or `expect` without its notification
    /// fails; a command its deadline answered ends once no call is in flight.
    package mutating func runTimers(_ s: inout Step) {
        guard let run = queue.run else { return }
        if run.answered {
            if case .call? = run.waiting { return }
            return endRun(nil, &s)
        }
        guard let until = run.deadline, until <= s.now else { return }
        switch run.waiting {
        case .sleep:
            queue.run?.waiting = nil
            queue.run?.index += 1
            advanceRun(&s)
        case .notify(let path, _):
            endRun(CommandError(.timeout, "no notification of \(Self.short(path)) in time"), &s)
        case .expect(let path, _):
            if let first = run.unlisted.first {
                let others = run.unlisted.count > 1 ? " (and \(run.unlisted.count - 1) more)" : ""
                endRun(CommandError(.unexpectedAnswer, "the device answered \(Hex.encode(first))\(others), which the profile's expect does not list"), &s)
            } else {
                endRun(CommandError(.timeout, "no answer from \(Self.short(path)) in time"), &s)
            }
        case .call, nil:
            break
        }
    }

    private static func short(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Ends the run: with `error`, a failure (a connection run fails the connection attempt); the armed paths go back
    /// to their routes; a command is answered unless its deadline answered it.
    package mutating func endRun(_ error: CommandError?, _ s: inout Step) {
        guard let run = queue.run else { return }
        queue.run = nil
        if !run.armed.isEmpty { s.emit(.disarmNotify(paths: run.armed.sorted())) }
        let id = device.profile?.id ?? "?"
        switch run.purpose {
        case .connection:
            guard let error else {
                return s.log(.debug, "profile \(id): connection steps done")
            }
            s.log(.warning, "profile \(id): \(run.stepDescription) failed: \(error); ending the connection")
            // Nothing more runs on this link (the setup's marker included); the attempt fails and the policy retries.
            link?.setup.operations.removeAll()
            if case .subscribing = machine.state {
                feed(.subscribeFailed, &s)
            } else {
                disconnect(&s)
            }
        case .command(let command, let profileCommand):
            guard !run.answered else { return }
            if let error {
                s.log(.info, "command \(profileCommand.name) on \(device.segment): \(run.stepDescription): \(error)")
                s.emit(.respond(command, .failed(.command, error: error, transaction: command.transaction)))
            } else {
                s.emit(.respond(command, .commandSucceeded(transaction: command.transaction)))
            }
        }
    }

    /// The link went: a command run is answered `not_connected` (not sent again: its steps are not idempotent), a
    /// connection run goes with the link's setup.
    package mutating func runLinkLost(_ s: inout Step) {
        guard let run = queue.run else { return }
        queue.run = nil
        if !run.armed.isEmpty { s.emit(.disarmNotify(paths: run.armed.sorted())) }
        if case .command(let command, _) = run.purpose, !run.answered {
            fail(command, CommandError(.notConnected, "link lost at \(run.stepDescription); the command may have partly run"), &s)
        }
    }
}
