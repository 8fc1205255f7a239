/// A write command received on `.../{characteristic}/set` (SPEC §4), parsed
/// against the characteristic's ``ValueFormat``.
///
/// Accepted payloads:
///
/// - **Command object**: `{"raw": "01ff"}` (hex as ``Hex/decode(_:)-(String)`` reads it)
///   or `{"value": <the value in the format>}`, exactly one of the two, plus
///   optionally `"response": true|false` (`null` counts as absent) and
///   `"transaction": <any JSON>`. Other or repeated keys are rejected. Any payload whose
///   first non-whitespace byte is `{` is read as a command object, so it must be valid JSON.
///   The one exception is a format whose value is itself an object
///   (``ValueFormat/heartRateMeasurement``): an object without any of the command
///   keys is that value, e.g. `{"bpm": 72}`.
/// - **Bare payload** in the characteristic's format:
///   - ``ValueFormat/hex``: hex text (`01ff`, `01 ff`, `0x01ff`), or a JSON string of it;
///   - ``ValueFormat/utf8``: the text itself, any valid UTF-8 (a complete JSON string
///     literal such as `"abc"` is unquoted);
///   - every other format: a JSON value as ``ValueFormat/encode(_:)`` takes it, which for
///     numeric formats is a number such as `42`, `-3`, `21.5`.
///
/// Rejected (``CommandErrorCode/invalidPayload``): an empty payload (also
/// whitespace only, except for ``ValueFormat/utf8`` where only zero bytes is empty)
/// — MQTT clients send empty payloads to clear retained messages, so an empty
/// write must be explicit: `{"raw": ""}` writes zero bytes; payloads larger
/// than 1 MiB; values longer than ``maxValueLength``; anything the format
/// cannot encode.
public struct WriteCommand: Sendable, Hashable {
    /// The bytes to write.
    public var bytes: [UInt8]
    /// The requested write type: `true` with response, `false` without, `nil` when not given
    /// (see ``WriteTypeDecision``).
    public var response: Bool?
    /// The `"transaction"` to echo in the result; `nil` when the command had none
    /// (`.some(.null)` for an explicit `"transaction": null`).
    public var transaction: JSONValue?

    /// Creates a write command.
    public init(bytes: [UInt8], response: Bool? = nil, transaction: JSONValue? = nil) {
        self.bytes = bytes
        self.response = response
        self.transaction = transaction
    }

    /// The longest characteristic value (Bluetooth Core, Vol 3, Part F, 3.2.9): 512 bytes.
    public static let maxValueLength = 512

    /// The keys of the command object form.
    public static let commandKeys = ["raw", "value", "response", "transaction"]

    /// The outcome of ``WriteCommand/parse(_:format:)``: the command or why it is invalid,
    /// and the transaction to echo either way.
    public struct Parsed: Sendable, Hashable {
        /// The command, or an ``CommandErrorCode/invalidPayload`` error.
        public var result: Result<WriteCommand, CommandError>
        /// The payload's `"transaction"` when it is a JSON object that has one, also when
        /// the command is invalid, so that the error result can echo it.
        public var transaction: JSONValue?

        /// Creates an outcome.
        public init(result: Result<WriteCommand, CommandError>, transaction: JSONValue?) {
            self.result = result
            self.transaction = transaction
        }

        /// The command, or `nil` when the payload is invalid.
        public var command: WriteCommand? {
            if case .success(let command) = result { return command }
            return nil
        }

        /// The error, or `nil` when the payload is valid.
        public var error: CommandError? {
            if case .failure(let error) = result { return error }
            return nil
        }
    }

    /// Parses a `/set` payload for a characteristic whose values are in `format`. Never traps,
    /// whatever the bytes.
    public static func parse(_ payload: [UInt8], format: ValueFormat, presentation: PresentationFormat? = nil) -> Parsed {
        // A Presentation Format descriptor (SPEC §11) describes the value when no format is configured:
        // text as utf8, everything else as JSON values it encodes.
        if let presentation, presentation.encodesValues {
            if presentation.format == .utf8s { return parse(payload, format: .utf8) }
            return parse(payload, format: format, encoder: .presentation(presentation))
        }
        return parse(payload, format: format, encoder: .format(format))
    }

    /// What turns a JSON value into bytes: the characteristic's format or its presentation format.
    enum Encoder {
        case format(ValueFormat)
        case presentation(PresentationFormat)
    }

    static func parse(_ payload: [UInt8], format: ValueFormat, encoder: Encoder) -> Parsed {
        guard payload.count <= CommandPayload.maxSize else {
            return Parsed(
                result: .failure(
                    .invalidPayload("payload too large: \(payload.count) bytes (at most \(CommandPayload.maxSize))")),
                transaction: nil)
        }
        let start = CommandPayload.firstNonWhitespace(payload)
        if let start, payload[start] == 0x7B {  // {
            let json: JSONValue
            do {
                json = try JSONParser.parse(payload)
            } catch {
                return Parsed(result: .failure(.invalidPayload(error.description)), transaction: nil)
            }
            guard case .object(let object) = json else {
                // Unreachable: a valid document starting with `{` is an object.
                return Parsed(result: .failure(.invalidPayload("expected a JSON object")), transaction: nil)
            }
            if case .format = encoder, format.takesObjectValue, !object.keys.contains(where: commandKeys.contains) {
                let bytes = encode(json, format: format, what: "payload")
                return Parsed(result: checked(bytes, response: nil, transaction: nil), transaction: nil)
            }
            let transaction = object["transaction"]
            return Parsed(
                result: parseObject(object, format: format, encoder: encoder, transaction: transaction),
                transaction: transaction)
        }
        if case .presentation(let presentation) = encoder {
            return Parsed(result: parseBareJSON(payload, start: start, encoder: encoder, what: presentation.name), transaction: nil)
        }
        return Parsed(result: parseBare(payload, start: start, format: format), transaction: nil)
    }

    // MARK: - Command object

    static func parseObject(
        _ object: JSONObject, format: ValueFormat, encoder: Encoder? = nil, transaction: JSONValue?
    ) -> Result<WriteCommand, CommandError> {
        var seen: [String] = []
        seen.reserveCapacity(object.count)
        for key in object.keys {
            guard commandKeys.contains(key) else {
                return .failure(
                    .invalidPayload(
                        "unknown key \(CommandPayload.quoted(key))"
                            + " (allowed: \"raw\", \"value\", \"response\", \"transaction\")"))
            }
            guard !seen.contains(key) else {
                return .failure(.invalidPayload("duplicate key \(CommandPayload.quoted(key))"))
            }
            seen.append(key)
        }
        let response: Bool?
        switch object["response"] {
        case nil, .null?: response = nil
        case .bool(let flag)?: response = flag
        case let other?:
            return .failure(.invalidPayload("\"response\" must be true or false, not \(other.kindName)"))
        }
        let bytes: Result<[UInt8], CommandError>
        switch (object["raw"], object["value"]) {
        case (nil, nil):
            return .failure(
                .invalidPayload("missing \"raw\" (hex bytes) or \"value\" (in the format \(format.rawValue))"))
        case (_?, _?):
            return .failure(.invalidPayload("give either \"raw\" or \"value\", not both"))
        case (let raw?, nil):
            guard case .string(let text) = raw else {
                return .failure(.invalidPayload("\"raw\" must be a hex string such as \"01ff\", not \(raw.kindName)"))
            }
            do {
                bytes = .success(try Hex.decode(text))
            } catch {
                bytes = .failure(.invalidPayload("\"raw\" is not hex: \(error.description)"))
            }
        case (nil, let value?):
            bytes = encode(value, encoder ?? .format(format), what: "\"value\"")
        }
        return checked(bytes, response: response, transaction: transaction)
    }

    // MARK: - Bare payload

    static func parseBare(_ payload: [UInt8], start: Int?, format: ValueFormat) -> Result<WriteCommand, CommandError> {
        switch format {
        case .utf8:
            guard !payload.isEmpty else { return .failure(emptyPayload) }
            guard UTF8Validation.isValid(payload) else {
                return .failure(.invalidPayload("payload is not valid UTF-8 (format utf8)"))
            }
            if let start, payload[start] == 0x22, case .string(let text)? = try? JSONParser.parse(payload) {
                return checked(.success(Array(text.utf8)), response: nil, transaction: nil)
            }
            return checked(.success(payload), response: nil, transaction: nil)
        case .hex:
            guard let start else { return .failure(emptyPayload) }
            if payload[start] == 0x22 {  // "
                guard case .string(let text)? = try? JSONParser.parse(payload) else {
                    return .failure(.invalidPayload("payload is neither hex text such as 01ff nor a JSON string of it"))
                }
                return checked(encode(.string(text), format: .hex, what: "payload"), response: nil, transaction: nil)
            }
            do {
                return checked(.success(try Hex.decode(payload)), response: nil, transaction: nil)
            } catch {
                return .failure(.invalidPayload("payload is not hex bytes such as 01ff: \(error.description)"))
            }
        default:
            return parseBareJSON(payload, start: start, encoder: .format(format), what: "format \(format.rawValue)")
        }
    }

    /// A bare JSON value (a number, `true`, ...) encoded by `encoder`; `what` names it in messages.
    static func parseBareJSON(
        _ payload: [UInt8], start: Int?, encoder: Encoder, what: String
    ) -> Result<WriteCommand, CommandError> {
        guard start != nil else { return .failure(emptyPayload) }
        let value: JSONValue
        do {
            value = try JSONParser.parse(payload)
        } catch {
            let example = if case .format(let format) = encoder { format.bareExample } else { "a JSON value such as 23.5" }
            return .failure(.invalidPayload("payload for \(what) must be \(example): \(error.description)"))
        }
        return checked(encode(value, encoder, what: "payload"), response: nil, transaction: nil)
    }

    static let emptyPayload = CommandError.invalidPayload(
        "empty payload; send a value, or {\"raw\":\"\"} to write zero bytes")

    // MARK: - Helpers

    /// `value` encoded in `format`; `what` names it in messages.
    static func encode(_ value: JSONValue, _ encoder: Encoder, what: String) -> Result<[UInt8], CommandError> {
        switch encoder {
        case .format(let format): return encode(value, format: format, what: what)
        case .presentation(let presentation): return presentation.encode(value)
        }
    }

    static func encode(_ value: JSONValue, format: ValueFormat, what: String) -> Result<[UInt8], CommandError> {
        do {
            return .success(try format.encode(value))
        } catch {
            return .failure(.invalidPayload("\(what) does not fit format \(format.rawValue): \(error.message)"))
        }
    }

    /// The command for `bytes`, unless they are longer than ``maxValueLength``.
    static func checked(
        _ bytes: Result<[UInt8], CommandError>, response: Bool?, transaction: JSONValue?
    ) -> Result<WriteCommand, CommandError> {
        switch bytes {
        case .failure(let error):
            return .failure(error)
        case .success(let bytes):
            guard bytes.count <= maxValueLength else {
                return .failure(
                    .invalidPayload(
                        "the value is \(bytes.count) bytes; a characteristic value holds at most \(maxValueLength)"))
            }
            return .success(WriteCommand(bytes: bytes, response: response, transaction: transaction))
        }
    }
}
