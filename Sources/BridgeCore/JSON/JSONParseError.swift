/// The error of ``JSONParser``: what is wrong and the byte offset where it was found.
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// The input ended inside a value (or was empty).
        case unexpectedEnd = "unexpected_end"
        /// A byte that the grammar does not allow here.
        case unexpectedCharacter = "unexpected_character"
        /// A string holds bytes that are not valid UTF-8.
        case invalidUTF8 = "invalid_utf8"
        /// A string holds an unescaped control character (U+0000...U+001F).
        case controlCharacterInString = "control_character_in_string"
        /// An unknown escape such as `\x`.
        case invalidEscape = "invalid_escape"
        /// A `\u` escape with bad hex digits or a lone surrogate.
        case invalidUnicodeEscape = "invalid_unicode_escape"
        /// A malformed number such as `01`, `1.`, `-`, `1e`.
        case invalidNumber = "invalid_number"
        /// A number too large for a `Double`, or a literal longer than the parser accepts.
        case numberOutOfRange = "number_out_of_range"
        /// More than whitespace after the value.
        case trailingData = "trailing_data"
        /// Arrays and objects nested deeper than the limit.
        case depthLimitExceeded = "depth_limit_exceeded"
        /// The input is larger than the limit.
        case sizeLimitExceeded = "size_limit_exceeded"
    }

    /// The kind of problem.
    public var code: Code
    /// The byte offset in the input where the problem was found.
    public var offset: Int

    /// Creates an error.
    public init(_ code: Code, at offset: Int) {
        self.code = code
        self.offset = offset
    }

    /// A human-readable message, e.g. `"invalid JSON: unexpected character at byte 3"`.
    public var description: String {
        let what: String
        switch code {
        case .unexpectedEnd: what = "unexpected end of input"
        case .unexpectedCharacter: what = "unexpected character"
        case .invalidUTF8: what = "invalid UTF-8"
        case .controlCharacterInString: what = "unescaped control character in string"
        case .invalidEscape: what = "invalid escape sequence"
        case .invalidUnicodeEscape: what = "invalid \\u escape"
        case .invalidNumber: what = "invalid number"
        case .numberOutOfRange: what = "number out of range"
        case .trailingData: what = "unexpected data after the value"
        case .depthLimitExceeded: what = "nesting too deep"
        case .sizeLimitExceeded: what = "input too large"
        }
        return "invalid JSON: \(what) at byte \(offset)"
    }
}
