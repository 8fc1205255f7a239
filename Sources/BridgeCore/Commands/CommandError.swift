/// Why a command failed: a SPEC §4 error code and a human-readable message.
///
/// It becomes the `"error": {"code": ..., "message": ...}` member of the command's result.
public struct CommandError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error code.
    public var code: CommandErrorCode
    /// A human-readable explanation.
    public var message: String
    /// A profile command's answer that names the error (`wrong_password`, SPEC §15 `expect`): the result's `"code"`
    /// instead of ``code`` (which stays ``CommandErrorCode/gattError`` for logs and counters).
    public var answer: String?

    /// Creates an error.
    public init(_ code: CommandErrorCode, _ message: String, answer: String? = nil) {
        self.code = code
        self.message = message
        self.answer = answer
    }

    /// The `"code"` of the result: the device's ``answer`` if it named one, else ``code``.
    public var resultCode: String { answer ?? code.rawValue }

    /// An ``CommandErrorCode/invalidPayload`` error.
    public static func invalidPayload(_ message: String) -> CommandError {
        CommandError(.invalidPayload, message)
    }

    /// A ``CommandErrorCode/gattError`` whose message starts with BlueZ's error name,
    /// e.g. `"org.bluez.Error.NotPermitted: Write not permitted"`.
    public static func gattError(name: String, message: String?) -> CommandError {
        guard let message, !message.isEmpty else { return CommandError(.gattError, name) }
        return CommandError(.gattError, "\(name): \(message)")
    }

    /// A ``CommandErrorCode/busy`` error for a device queue that holds `capacity` commands.
    public static func busy(capacity: Int) -> CommandError {
        CommandError(.busy, "too many pending commands for this device (at most \(capacity))")
    }

    /// `"<code>: <message>"`.
    public var description: String { "\(resultCode): \(message)" }
}
