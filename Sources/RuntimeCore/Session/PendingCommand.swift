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
        transaction = operation == .get
            ? ReadCommand.parse(payload).transaction
            : WriteCommand.parse(payload, format: .hex).transaction
    }

    /// The result of the command failing with `error`.
    package func failure(_ error: CommandError) -> CommandResult {
        .failed(CommandResult.Operation(operation), error: error, transaction: transaction)
    }
}
