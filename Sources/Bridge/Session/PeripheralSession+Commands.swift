import BlueZ
import BridgeCore

extension PeripheralSession {
    /// A command arrived: malformed ones and those that do not fit are answered at once; the
    /// rest wait in the queue until their turn or their deadline.
    func accept(_ command: PendingCommand, _ group: inout DiscardingTaskGroup) {
        // Results come in command order: a malformed command is answered at once only when
        // nothing is queued before it; otherwise at its turn (or its deadline).
        if commandCount == 0, !inFlight, let error = payloadError(command) {
            ctx.responder.finish(command, error)
            return
        }
        let capacity = max(1, ctx.config.commands.queue)
        guard commandCount < capacity else {
            ctx.responder.fail(command, .busy(capacity: capacity))
            return
        }
        guard command.deadline > now else {
            expire(command)
            return
        }
        workQueue.append(.command(command))
        commandCount += 1
    }

    /// The result for a `/set` whose payload does not parse in the characteristic's format (hex
    /// while the characteristic is not known), else nil.
    func payloadError(_ command: PendingCommand) -> CommandResult? {
        guard command.operation == .set else { return nil }
        let key = MappedCharacteristic.Key(service: command.service, characteristic: command.characteristic)
        let parsed = WriteCommand.parse(command.message.payload, format: characteristics[key]?.format ?? .hex)
        guard case .failure(let e) = parsed.result else { return nil }
        return .failed(.write, error: e, transaction: parsed.transaction)
    }

    /// The earliest deadline of a queued command.
    func firstCommandDeadline() -> BridgeInstant? {
        guard commandCount > 0 else { return nil }
        var first: BridgeInstant?
        for case .command(let c) in workQueue where first == nil || c.deadline < first! { first = c.deadline }
        return first
    }

    /// Answers every queued command whose deadline passed; none of them is sent afterwards.
    func expireCommands() {
        guard commandCount > 0 else { return }
        let now = self.now
        var kept: [GattOperation] = []
        kept.reserveCapacity(workQueue.count)
        for op in workQueue {
            if case .command(let c) = op, c.deadline <= now {
                commandCount -= 1
                expire(c)
            } else {
                kept.append(op)
            }
        }
        workQueue = kept
    }

    private func expire(_ c: PendingCommand) {
        if let error = payloadError(c) { return ctx.responder.finish(c, error) }
        let waited = ctx.config.commands.timeout
        if machine.isReady {
            ctx.responder.fail(c, CommandError(.timeout, "still queued behind earlier operations on '\(device.segment)' after \(waited); not sent"))
        } else {
            ctx.responder.fail(c, CommandError(.notConnected, "device '\(device.segment)' is not connected (waited \(waited))"))
        }
    }

    /// Fails every queued command (the session ends).
    func failQueuedCommands(_ error: CommandError) {
        for case .command(let c) in workQueue { ctx.responder.fail(c, error) }
        workQueue.removeAll()
        commandCount = 0
    }

    /// Runs a command at the head of the queue: checks it against the characteristic, then calls
    /// BlueZ with only the time left before its deadline.
    func execute(_ p: PendingCommand, attempt: Int, _ group: inout DiscardingTaskGroup) {
        let op = CommandResult.Operation(p.operation)
        let transaction = CommandResponder.transaction(of: p)
        let key = MappedCharacteristic.Key(service: p.service, characteristic: p.characteristic)
        guard let ch = characteristics[key] else {
            if let error = payloadError(p) { return ctx.responder.finish(p, error) }
            ctx.responder.fail(p, CommandError(
                .unknownCharacteristic, "device '\(p.device)' has no characteristic '\(p.characteristic)' in service '\(p.service)'"))
            return
        }
        let remaining = ctx.clock.remaining(until: p.deadline)
        // A call with almost no time left would be answered `timeout` while the device may
        // still act on it: not sent.
        guard remaining >= Self.minimumCallTime else {
            expire(p)
            return
        }
        if p.operation == .set {
            let parsed = WriteCommand.parse(p.message.payload, format: ch.format)
            let w: WriteCommand
            switch parsed.result {
            case .failure(let e):
                ctx.responder.finish(p, .failed(op, error: e, transaction: transaction))
                return
            case .success(let parsedWrite):
                w = parsedWrite
            }
            let type: WriteType
            do {
                type = try WriteTypeDecision.writeType(properties: ch.properties, response: w.response, configured: ch.writeTypes)
            } catch {
                ctx.responder.finish(p, .failed(op, error: error, transaction: transaction, response: w.response))
                return
            }
            launch(CommandJob(
                command: p, path: ch.path, format: ch.format, bytes: w.bytes, type: type, timeout: remaining,
                transaction: transaction), attempt: attempt, &group)
        } else {
            do {
                try WriteTypeDecision.checkReadable(properties: ch.properties)
            } catch {
                ctx.responder.finish(p, .failed(op, error: error, transaction: transaction))
                return
            }
            launch(CommandJob(
                command: p, path: ch.path, format: ch.format, bytes: [], type: .request, timeout: remaining,
                transaction: transaction), attempt: attempt, &group)
        }
    }

    /// What a command's BlueZ call needs.
    struct CommandJob: Sendable {
        var command: PendingCommand
        var path: String
        var format: ValueFormat
        var bytes: [UInt8]
        var type: WriteType
        /// The time left before the command's deadline.
        var timeout: Duration
        var transaction: JSONValue?
    }

    /// Runs a command's BlueZ call as a child task; its result comes back through the mailbox.
    private func launch(_ job: CommandJob, attempt: Int, _ group: inout DiscardingTaskGroup) {
        inFlight = true
        let c = job.command
        logger.debug("\(c.operation == .set ? "write" : "read") \(c.device)/\(c.service)/\(c.characteristic): sent to BlueZ, \(job.timeout) left")
        let central = ctx.central, mailbox = self.mailbox
        group.addTask {
            if job.command.operation == .set {
                let result = await PeripheralSession.write(central, job)
                mailbox.send(.operationFinished(attempt: attempt, .command(job.command, result, readValue: nil)))
            } else {
                let outcome = await PeripheralSession.read(central, job)
                mailbox.send(.operationFinished(attempt: attempt, outcome))
            }
        }
    }

    private static func write(_ central: any BluetoothCentral, _ job: CommandJob) async -> CommandResult {
        do {
            try await central.writeValue(
                characteristic: job.path, value: job.bytes, type: job.type == .request ? .request : .command,
                timeout: job.timeout)
            return .writeSucceeded(response: job.type.withResponse, transaction: job.transaction)
        } catch {
            return .failed(.write, error: map(error), transaction: job.transaction, response: job.type.withResponse)
        }
    }

    private static func read(_ central: any BluetoothCentral, _ job: CommandJob) async -> GattOutcome {
        do {
            let value = try await central.readValue(characteristic: job.path, timeout: job.timeout)
            let result = CommandResult.readSucceeded(raw: value, format: job.format, transaction: job.transaction)
            return .command(job.command, result, readValue: ReadValue(path: job.path, value: value))
        } catch {
            return .command(job.command, .failed(.read, error: map(error), transaction: job.transaction), readValue: nil)
        }
    }

    /// The least time left before its deadline with which a command is still sent to BlueZ.
    static let minimumCallTime: Duration = .milliseconds(50)

    /// A BlueZ error as a command error (SPEC §4 codes).
    static func map(_ error: BlueZError) -> CommandError {
        switch error.code {
        case .timeout:
            return CommandError(.timeout, "BlueZ did not answer before the command's deadline (\(error.name))")
        case .notConnected, .disconnected:
            return CommandError(.notConnected, "\(error.name): \(error.message)")
        default:
            return .gattError(name: error.name, message: error.message)
        }
    }
}
