/// Why a JSON value cannot be written in a characteristic's format.
///
/// The bridge reports it as a command result with error code `invalid_payload`.
public struct ValueEncodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// The JSON type does not fit the format (e.g. a string for `uint8`).
        case wrongType = "wrong_type"
        /// A number outside the format's range.
        case outOfRange = "out_of_range"
        /// A non-integral number for an integer format.
        case notAnInteger = "not_an_integer"
        /// Malformed hex text.
        case invalidHex = "invalid_hex"
    }

    /// The format that was asked for.
    public var format: ValueFormat
    /// The kind of problem.
    public var code: Code
    /// A human-readable explanation.
    public var message: String

    /// Creates an error.
    public init(format: ValueFormat, code: Code, message: String) {
        self.format = format
        self.code = code
        self.message = message
    }

    /// `"<format>: <message>"`.
    public var description: String { "\(format.rawValue): \(message)" }
}
