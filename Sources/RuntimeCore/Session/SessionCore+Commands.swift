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
            queue.inFlight = .command(c, answered: true)
            fail(c, CommandError(.timeout, "BlueZ did not answer before the command's deadline (\(configuration.commandTimeout))"), &s)
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
