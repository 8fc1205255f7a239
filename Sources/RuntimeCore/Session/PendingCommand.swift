import BridgeCore

/// A `/set` or `/get` waiting in a session's queue.
package struct PendingCommand<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The command's payload, as it arrived.
    package var payload: [UInt8]
    /// Where the result goes besides ``resultTopic`` (MQTT v5 Response Topic; nil without one).
    package var replyTo: ReplyAddress?
    package var device: String
    package var service: String
    package var characteristic: String
    package var operation: CharacteristicOperation
    /// `{base}/{device}/{service}/{characteristic}/result`.
    package var resultTopic: String
    /// `commands.timeout` after arrival (SPEC §4): answered by then, never sent afterwards.
    package var deadline: Instant
    /// The payload's `"transaction"`, echoed in the result (read once, when the command arrives).
    package let transaction: JSONValue?
    /// A `/set`'s payload as last parsed, and in which format: parsed again only in another format.
    package private(set) var write: (format: ValueFormat, presentation: PresentationFormat?, parsed: WriteCommand.Parsed)?
    /// A profile's named command (SPEC §15, `{base}/{device}/command/{name}/set`): its name; nil for a
    /// characteristic's `/set` or `/get`.
    package let profileCommand: String?
    /// A profile command's payload, parsed once.
    package let profilePayload: ProfileCommandPayload?

    /// A command that arrived with `payload`.
    package init(
        payload: [UInt8], replyTo: ReplyAddress?, device: String, service: String, characteristic: String,
        operation: CharacteristicOperation, resultTopic: String, deadline: Instant
    ) {
        self.payload = payload
        self.replyTo = replyTo
        self.device = device
        self.service = service
        self.characteristic = characteristic
        self.operation = operation
        self.resultTopic = resultTopic
        self.deadline = deadline
        if service == TopicMapper.commandSegment {
            profileCommand = characteristic
            let parsed = ProfileCommandPayload.parse(payload)
            // The cover pseudo-command's `open` is not JSON: its refusal is the session's to decide.
            profilePayload = parsed
            transaction = parsed.transaction
            return
        }
        profileCommand = nil
        profilePayload = nil
        if operation == .set {
            // Hex, the format of a characteristic without a `format` or a presentation format: most writes are
            // parsed only here.
            let parsed = WriteCommand.parse(payload, format: .hex)
            write = (.hex, nil, parsed)
            transaction = parsed.transaction
        } else {
            transaction = ReadCommand.parse(payload).transaction
        }
    }

    /// The `/set` payload parsed in `format` (decoded by `presentation` first, when given).
    package mutating func parsedWrite(format: ValueFormat, presentation: PresentationFormat?) -> WriteCommand.Parsed {
        if let write, write.format == format, write.presentation == presentation { return write.parsed }
        let parsed = WriteCommand.parse(payload, format: format, presentation: presentation)
        write = (format, presentation, parsed)
        return parsed
    }

    /// The result of the command failing with `error`.
    package func failure(_ error: CommandError) -> CommandResult {
        .failed(profileCommand != nil ? .command : CommandResult.Operation(operation), error: error, transaction: transaction)
    }
}
