/// The result of a command, published on `.../{characteristic}/result` (SPEC §4).
///
/// Its JSON has the members, in this order, `status`, `op`, `transaction`
/// (when the command had one), `response` (writes), `raw` and `value` (successful
/// reads) and `error` (failures); a member whose property is `nil` is left out.
/// The factory methods set exactly the members the SPEC gives each kind of result.
///
/// ```json
/// {"status":"ok","op":"write","transaction":42,"response":false}
/// {"status":"ok","op":"read","raw":"4b","value":75}
/// {"status":"error","op":"write","error":{"code":"invalid_payload","message":"..."}}
/// ```
public struct CommandResult: Sendable, Hashable {
    /// `"status"`.
    public enum Status: String, Sendable, Hashable {
        /// The command was carried out.
        case ok
        /// The command failed; see ``CommandResult/error``.
        case error
    }

    /// `"op"`: the kind of command.
    public enum Operation: String, Sendable, Hashable {
        /// A `/set` command.
        case write
        /// A `/get` command.
        case read
        /// A profile's named command (SPEC §15, `{base}/{device}/command/{name}/set`).
        case command

        /// The operation of a command topic.
        public init(_ operation: CharacteristicOperation) {
            switch operation {
            case .set: self = .write
            case .get: self = .read
            }
        }
    }

    /// `"op"`.
    public var operation: Operation
    /// `"transaction"`: echoed from the command; `nil` leaves the member out.
    public var transaction: JSONValue?
    /// `"response"`: whether the write was with response (writes only).
    public var response: Bool?
    /// `"raw"`: the bytes read (successful reads only), written as lowercase hex.
    public var raw: [UInt8]?
    /// `"value"`: the bytes read, decoded (successful reads only).
    public var value: JSONValue?
    /// `"error"`: why the command failed; `nil` for success.
    public var error: CommandError?

    /// Creates a result with the given members.
    public init(
        operation: Operation,
        transaction: JSONValue? = nil,
        response: Bool? = nil,
        raw: [UInt8]? = nil,
        value: JSONValue? = nil,
        error: CommandError? = nil
    ) {
        self.operation = operation
        self.transaction = transaction
        self.response = response
        self.raw = raw
        self.value = value
        self.error = error
    }

    /// `"status"`: ``Status/ok`` unless there is an ``error``.
    public var status: Status { error == nil ? .ok : .error }

    /// A successful write, with response or without.
    public static func writeSucceeded(response: Bool, transaction: JSONValue?) -> CommandResult {
        CommandResult(operation: .write, transaction: transaction, response: response)
    }

    /// A successful read of `raw`, decoded as `value`.
    public static func readSucceeded(raw: [UInt8], value: JSONValue, transaction: JSONValue?) -> CommandResult {
        CommandResult(operation: .read, transaction: transaction, raw: raw, value: value)
    }

    /// A successful read of `raw`, decoded with `format` (as the value topic's payload is).
    public static func readSucceeded(raw: [UInt8], format: ValueFormat, transaction: JSONValue?) -> CommandResult {
        readSucceeded(raw: raw, value: format.decode(raw), transaction: transaction)
    }

    /// A profile command that ran (its `expect` answered `ok`, when it has one).
    public static func commandSucceeded(transaction: JSONValue?) -> CommandResult {
        CommandResult(operation: .command, transaction: transaction)
    }

    /// A failed command. `response` is the write type when it was known (writes only).
    public static func failed(
        _ operation: Operation, error: CommandError, transaction: JSONValue?, response: Bool? = nil
    ) -> CommandResult {
        CommandResult(operation: operation, transaction: transaction, response: response, error: error)
    }

    /// The JSON payload as UTF-8 bytes.
    public var jsonBytes: [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(64 + 2 * (raw?.count ?? 0))
        append(to: &buffer)
        return buffer
    }

    /// The JSON payload as a string.
    public var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }

    /// Appends the JSON payload to `buffer`.
    public func append(to buffer: inout [UInt8]) {
        buffer.append(contentsOf: error == nil ? Self.okPrefix : Self.errorPrefix)
        switch operation {
        case .write: buffer.append(contentsOf: Self.writeOperation)
        case .read: buffer.append(contentsOf: Self.readOperation)
        case .command: buffer.append(contentsOf: Self.commandOperation)
        }
        if let transaction {
            buffer.append(contentsOf: Self.transactionKey)
            JSONWriter.append(transaction, to: &buffer)
        }
        if let response {
            buffer.append(contentsOf: Self.responseKey)
            JSONWriter.appendBool(response, to: &buffer)
        }
        if let raw {
            buffer.append(contentsOf: Self.rawKey)
            Hex.append(raw, to: &buffer)
            buffer.append(0x22)
        }
        if let value {
            buffer.append(contentsOf: Self.valueKey)
            JSONWriter.append(value, to: &buffer)
        }
        if let error {
            buffer.append(contentsOf: Self.errorCodeKey)
            JSONWriter.appendString(error.resultCode, to: &buffer)
            buffer.append(contentsOf: Self.messageKey)
            JSONWriter.appendString(error.message, to: &buffer)
            buffer.append(0x7D)
        }
        buffer.append(0x7D)
    }

    static let okPrefix: [UInt8] = Array(#"{"status":"ok","op":"#.utf8)
    static let errorPrefix: [UInt8] = Array(#"{"status":"error","op":"#.utf8)
    static let writeOperation: [UInt8] = Array(#""write""#.utf8)
    static let readOperation: [UInt8] = Array(#""read""#.utf8)
    static let commandOperation: [UInt8] = Array(#""command""#.utf8)
    static let transactionKey: [UInt8] = Array(#","transaction":"#.utf8)
    static let responseKey: [UInt8] = Array(#","response":"#.utf8)
    static let rawKey: [UInt8] = Array(#","raw":""#.utf8)
    static let valueKey: [UInt8] = Array(#","value":"#.utf8)
    static let errorCodeKey: [UInt8] = Array(#","error":{"code":"#.utf8)
    static let messageKey: [UInt8] = Array(#","message":"#.utf8)
}
