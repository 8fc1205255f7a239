import BridgeCore

extension SessionCore {
    /// A command arrived: malformed ones and those that do not fit are answered at once; the
    /// rest wait in the queue until their turn or their deadline.
    package mutating func accept(_ command: PendingCommand, _ s: inout Step) {
        var command = command
        // Results come in command order: a malformed command is answered at once only when
        // nothing is queued before it; otherwise at its turn (or its deadline).
        if queue.commandCount == 0, !queue.busy, let error = payloadError(&command) {
            s.emit(.respond(command, error))
            return
        }
        let capacity = configuration.commandCapacity
        guard queue.commandCount < capacity else {
            fail(command, .busy(capacity: capacity), &s)
            return
        }
        guard command.deadline > s.now else {
            expire(command, &s)
            return
        }
        queue.work.append(.command(command))
    }

    /// The result for a `/set` whose payload does not parse in the characteristic's format or
    /// presentation format (hex while the characteristic is not known), else nil.
    package func payloadError(_ command: inout PendingCommand) -> CommandResult? {
        if command.profileCommand != nil { return profileCommandError(command) }
        guard command.operation == .set else { return nil }
        let key = MappedCharacteristic.Key(service: command.service, characteristic: command.characteristic)
        let ch = characteristics[key]
        let parsed = command.parsedWrite(format: ch?.format ?? .hex, presentation: ch?.presentation)
        guard case .failure(let e) = parsed.result else { return nil }
        return .failed(.write, error: e, transaction: parsed.transaction)
    }

    /// The earliest deadline of a queued command, or of the command in flight not answered yet.
    package func firstCommandDeadline() -> Instant? {
        var first = queue.unansweredCommand?.deadline
        guard queue.commandCount > 0 else { return first }
        for case .command(let c) in queue.work where first == nil || c.deadline < first! { first = c.deadline }
        return first
    }

    /// Answers every command whose deadline passed: the one in flight first (its BlueZ call may
    /// report its own timeout only after later commands' deadlines, which would answer them out
    /// of order), then the queued ones, none of which is sent afterwards.
    package mutating func expireCommands(_ s: inout Step) {
        if let c = queue.unansweredCommand, c.deadline <= s.now {
            queue.markAnswered()
            if let run = queue.run {
                fail(c, CommandError(.timeout, "the command's steps did not finish before its deadline (\(configuration.commandTimeout)), at \(run.stepDescription)"), &s)
            } else {
                fail(c, CommandError(.timeout, "BlueZ did not answer before the command's deadline (\(configuration.commandTimeout))"), &s)
            }
        }
        guard queue.commandCount > 0 else { return }
        var kept: [GattOperation] = []
        kept.reserveCapacity(queue.work.count)
        for op in queue.work {
            if case .command(let c) = op, c.deadline <= s.now {
                expire(c, &s)
            } else {
                kept.append(op)
            }
        }
        queue.work = kept
    }

    /// The profile command a `…/command/{name}/set` runs: the profile's command of that name, or for the cover
    /// pseudo-command (`cover` with `open`, `close` or `stop`, when the profile has `cover:` and no command named
    /// `cover`) the command `cover:` names for it.
    package func profileCommand(_ c: PendingCommand) -> ProfileCommand? {
        guard let binding = device.profile, let name = c.profileCommand else { return nil }
        if let command = binding.command(name) { return command }
        guard name == "cover", let cover = binding.profile.cover, let action = ProfileCommandPayload.coverAction(c.payload) else {
            return nil
        }
        let target = switch action {
        case "open": cover.open
        case "close": cover.close
        default: cover.stop
        }
        return target.flatMap(binding.command)
    }

    /// The result for a profile command refused before it runs (nil: it may run): `unknown_command` for a `/get`, a
    /// device without a profile or a name the profile does not have; `invalid_payload` for a payload that is not a
    /// JSON object, or whose parameters the command's templates do not take (a render with the time 0 tells).
    package func profileCommandError(_ c: PendingCommand) -> CommandResult? {
        let name = c.profileCommand ?? ""
        guard c.operation == .set else {
            return c.failure(CommandError(.unknownCommand, "commands take /set, not /get (command '\(name)')"))
        }
        guard let binding = device.profile else {
            return c.failure(CommandError(.unknownCommand, "device '\(device.segment)' has no profile, so no command '\(name)'"))
        }
        guard let command = profileCommand(c) else {
            if name == "cover", binding.profile.cover != nil, binding.command(name) == nil {
                return c.failure(.invalidPayload("the cover command takes open, close or stop"))
            }
            return c.failure(CommandError(.unknownCommand, "profile '\(binding.id)' has no command '\(name)'"))
        }
        // The cover pseudo-command's payload is its action, not parameters.
        if command.name != name { return nil }
        let payload = c.profilePayload ?? ProfileCommandPayload.parse(c.payload)
        if let error = payload.error { return c.failure(error) }
        let context = ProfileTemplate.Context(unixTime: 0, options: binding.options, parameters: payload.parameters)
        for step in command.steps {
            guard case .write(_, let template, _) = step.action else { continue }
            do throws(ProfileCodecError) { _ = try template.render(context) } catch {
                if error.commandErrorCode == .invalidPayload { return c.failure(.invalidPayload(error.message)) }
            }
        }
        return nil
    }

    private mutating func expire(_ c: PendingCommand, _ s: inout Step) {
        var c = c
        if let error = payloadError(&c) { return s.emit(.respond(c, error)) }
        let waited = configuration.commandTimeout
        if machine.isReady {
            fail(c, CommandError(.timeout, "still queued behind earlier operations on '\(device.segment)' after \(waited); not sent"), &s)
        } else {
            fail(c, CommandError(.notConnected, "device '\(device.segment)' is not connected (waited \(waited))"), &s)
        }
    }

    /// Answers a command with an error.
    package mutating func fail(_ c: PendingCommand, _ error: CommandError, _ s: inout Step) {
        s.emit(.respond(c, c.failure(error)))
    }

    /// Fails every queued command (the session ends).
    package mutating func failQueuedCommands(_ error: CommandError, _ s: inout Step) {
        for case .command(let c) in queue.work { fail(c, error, &s) }
        queue.work.removeAll()
    }

    /// Runs a command at the head of the queue: checks it against the characteristic, then calls
    /// BlueZ with only the time left before its deadline.
    package mutating func execute(_ p: PendingCommand, attempt: Int, _ s: inout Step) {
        var p = p
        if p.profileCommand != nil {
            if let error = profileCommandError(p) { return s.emit(.respond(p, error)) }
            guard let command = profileCommand(p) else { return }
            guard s.now.duration(to: p.deadline) >= Self.minimumCallTime else { return expire(p, &s) }
            s.log(.debug, "command \(command.name) on \(device.segment): running \(command.steps.count) steps")
            return startRun(.command(p, command), parameters: p.profilePayload?.parameters ?? [:], &s)
        }
        let op = CommandResult.Operation(p.operation)
        let transaction = p.transaction
        let key = MappedCharacteristic.Key(service: p.service, characteristic: p.characteristic)
        guard let ch = characteristics[key] else {
            if let error = payloadError(&p) { return s.emit(.respond(p, error)) }
            fail(p, CommandError(
                .unknownCharacteristic, "device '\(p.device)' has no characteristic '\(p.characteristic)' in service '\(p.service)'"), &s)
            return
        }
        let remaining = max(.zero, s.now.duration(to: p.deadline))
        // A call with almost no time left would be answered `timeout` while the device may
        // still act on it: not sent.
        guard remaining >= Self.minimumCallTime else {
            expire(p, &s)
            return
        }
        if p.operation == .set {
            let parsed = p.parsedWrite(format: ch.format, presentation: ch.presentation)
            let w: WriteCommand
            switch parsed.result {
            case .failure(let e):
                s.emit(.respond(p, .failed(op, error: e, transaction: transaction)))
                return
            case .success(let parsedWrite):
                w = parsedWrite
            }
            let type: GattWriteType
            do {
                type = try WriteTypeDecision.writeType(properties: ch.properties, response: w.response, configured: ch.writeTypes)
            } catch {
                s.emit(.respond(p, .failed(op, error: error, transaction: transaction, response: w.response)))
                return
            }
            launch(CommandJob(
                command: p, path: ch.path, format: ch.format, bytes: w.bytes, type: type, timeout: remaining,
                transaction: transaction), attempt: attempt, &s)
        } else {
            do {
                try WriteTypeDecision.checkReadable(properties: ch.properties)
            } catch {
                s.emit(.respond(p, .failed(op, error: error, transaction: transaction)))
                return
            }
            launch(CommandJob(
                command: p, path: ch.path, format: ch.format, bytes: [], type: .request, timeout: remaining,
                transaction: transaction, presentation: ch.presentation), attempt: attempt, &s)
        }
    }

    /// Sends a command's BlueZ call; its result comes back as an input.
    private mutating func launch(_ job: CommandJob, attempt: Int, _ s: inout Step) {
        queue.inFlight = .command(job.command, answered: false)
        let c = job.command
        s.log(.debug, "\(c.operation == .set ? "write" : "read") \(c.device)/\(c.service)/\(c.characteristic): sent to BlueZ, \(job.timeout) left")
        s.emit(.command(job, attempt: attempt))
    }

    /// The least time left before its deadline with which a command is still sent to BlueZ.
    package static var minimumCallTime: Duration { .milliseconds(50) }
}
