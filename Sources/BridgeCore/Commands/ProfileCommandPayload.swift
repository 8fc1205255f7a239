/// The payload of a profile's named command (SPEC §15, `{base}/{device}/command/{name}/set`): empty, or a JSON
/// object whose members are the command's parameters; `"transaction"` is echoed in the result and is no parameter.
public struct ProfileCommandPayload: Sendable, Hashable {
    /// The parameters (the object's members but `transaction`).
    public var parameters: [String: JSONValue]
    /// The `"transaction"` to echo; nil without one.
    public var transaction: JSONValue?
    /// Why the payload is refused (not a JSON object), if it is.
    public var error: CommandError?

    /// Parses `payload`. Leading and trailing whitespace is ignored; an empty payload has no parameters.
    public static func parse(_ payload: [UInt8]) -> ProfileCommandPayload {
        var result = ProfileCommandPayload(parameters: [:], transaction: nil, error: nil)
        guard payload.contains(where: { !Self.isSpace($0) }) else { return result }
        let value: JSONValue
        do {
            value = try JSONParser.parse(payload)
        } catch {
            result.error = .invalidPayload("a command's payload must be empty or a JSON object: \(error)")
            return result
        }
        guard case .object(let object) = value else {
            result.error = .invalidPayload("a command's payload must be empty or a JSON object")
            return result
        }
        for member in object {
            if member.key == "transaction" {
                result.transaction = member.value
            } else {
                result.parameters[member.key] = member.value
            }
        }
        return result
    }

    /// The action of a payload sent to the cover pseudo-command (`…/command/cover/set`, what Home Assistant's cover
    /// publishes): `open`, `close` or `stop`, as plain text or a JSON string; nil for anything else.
    public static func coverAction(_ payload: [UInt8]) -> String? {
        // Trimmed by indices (one pass: a payload of a million spaces costs a million steps, not their square).
        guard let start = payload.firstIndex(where: { !isSpace($0) }), let end = payload.lastIndex(where: { !isSpace($0) }),
            end - start < 16
        else { return nil }
        var text = Array(payload[start...end])
        if text.first == 0x22, case .string(let s)? = try? JSONParser.parse(text) { text = Array(s.utf8) }
        let action = String(decoding: text, as: UTF8.self)
        return ["open", "close", "stop"].contains(action) ? action : nil
    }

    private static func isSpace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D }
}
