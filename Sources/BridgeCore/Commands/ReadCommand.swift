/// A read command received on `.../{characteristic}/get` (SPEC §4).
///
/// Any payload is accepted: a JSON object may carry a `"transaction"` (any
/// JSON value) to be echoed in the result; everything else is ignored.
public struct ReadCommand: Sendable, Hashable {
    /// The `"transaction"` to echo in the result; `nil` when the command had none
    /// (`.some(.null)` for an explicit `"transaction": null`).
    public var transaction: JSONValue?

    /// Creates a read command.
    public init(transaction: JSONValue? = nil) {
        self.transaction = transaction
    }

    /// Parses a `/get` payload. Never fails: a payload that is not a JSON
    /// object (or is malformed, or larger than 1 MiB) is a read without transaction.
    public static func parse(_ payload: [UInt8]) -> ReadCommand {
        guard payload.count <= CommandPayload.maxSize, CommandPayload.looksLikeObject(payload),
            case .object(let object)? = try? JSONParser.parse(payload)
        else { return ReadCommand() }
        return ReadCommand(transaction: object["transaction"])
    }
}
