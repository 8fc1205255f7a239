/// The `error.code` of a failed command's result (SPEC §4).
///
/// The raw values are the strings the result payload carries.
public enum CommandErrorCode: String, Sendable, Hashable, CaseIterable {
    /// The payload cannot be understood: not hex, odd length, a value out of range
    /// for the characteristic's format, JSON of the wrong shape.
    case invalidPayload = "invalid_payload"
    /// The topic names no known characteristic (also for an unknown device).
    case unknownCharacteristic = "unknown_characteristic"
    /// A write to a characteristic whose Flags allow no write at all.
    case notWritable = "not_writable"
    /// A read of a characteristic without the `read` flag.
    case notReadable = "not_readable"
    /// The requested write type (with or without response) is not in the characteristic's Flags.
    case unsupportedWriteType = "unsupported_write_type"
    /// The device is known but was not connected within the command timeout.
    case notConnected = "not_connected"
    /// BlueZ did not answer in time.
    case timeout
    /// BlueZ answered with an error; the message carries its error name.
    case gattError = "gatt_error"
    /// The device's command queue is full; the command was not carried out.
    case busy
    /// `commands.allow` has no pattern for the target (SPEC §8); nothing reached the device.
    case notAllowed = "not_allowed"
    /// A profile command (SPEC §15) the device's profile does not have, a device without a profile, or a `/get` on
    /// a command topic.
    case unknownCommand = "unknown_command"
    /// A profile command's answer the profile does not list (its first byte), or that does not decode.
    case unexpectedAnswer = "unexpected_answer"
}
