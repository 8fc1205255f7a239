/// Why a profile's struct decode or write template (SPEC §15) was refused when compiled, or failed
/// when used.
///
/// Compile errors (``Code/badFormat``, ``Code/fieldCount``, ``Code/badField``, ``Code/badTransform``,
/// ``Code/badFirstByte``, ``Code/badTemplate``) carry the ``column`` in the string they concern (the
/// struct format, the transform, the `first_byte` key, the template), so that a profile loader can
/// report `file:line:column`: the column of the string's first character plus ``column`` - 1 (plus
/// one for an opening quote). Errors of use (``Code/tooShort``, ``Code/unknownFirstByte``, the
/// parameter and option errors of rendering) have column 0.
public struct ProfileCodecError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// A struct format string that does not parse (Python `struct` syntax, SPEC §15).
        case badFormat = "bad_format"
        /// The struct has a different number of values than the decode names fields.
        case fieldCount = "field_count"
        /// A field name that is empty or given twice.
        case badField = "bad_field"
        /// A field's transform that does not parse (`/10`, `*0.01`) or does not fit its value
        /// (a scale on text, a map on a float).
        case badTransform = "bad_transform"
        /// A payload shorter than its struct.
        case tooShort = "too_short"
        /// A `first_byte` key that is not one byte in hex, or is given twice.
        case badFirstByte = "bad_first_byte"
        /// A payload whose first byte has no entry in a `first_byte` dispatch (or an empty payload).
        case unknownFirstByte = "unknown_first_byte"
        /// A write template that does not parse (hex digits, `{...}` placeholders, conversions).
        case badTemplate = "bad_template"
        /// A command parameter the template needs is not in the command's payload.
        case missingParameter = "missing_parameter"
        /// A command parameter of the wrong type or out of its conversion's range.
        case invalidParameter = "invalid_parameter"
        /// An option (`profile_options`) the template needs is not set.
        case missingOption = "missing_option"
        /// An option that its conversion cannot take (not an integer, out of range).
        case invalidOption = "invalid_option"
        /// The wall time does not fit `{unix}`'s conversion.
        case invalidTime = "invalid_time"
    }

    /// The kind of problem.
    public var code: Code
    /// A message a user can act on (without the column).
    public var message: String
    /// 1-based column in Unicode scalars in the string the error concerns; 0 when it concerns no
    /// position (a payload, a parameter, the whole string).
    public var column: Int

    /// Creates an error.
    public init(_ code: Code, _ message: String, column: Int = 0) {
        self.code = code
        self.message = message
        self.column = column
    }

    /// The SPEC §4 result code of a command that failed with this error while its template was
    /// rendered: ``CommandErrorCode/invalidPayload`` for a missing or invalid parameter (the
    /// command's payload is at fault), `nil` for the others (the profile or its options are).
    public var commandErrorCode: CommandErrorCode? {
        switch code {
        case .missingParameter, .invalidParameter: return .invalidPayload
        default: return nil
        }
    }

    /// `"column N: message"`, or the message alone when the column is 0.
    public var description: String {
        column > 0 ? "column \(column): \(message)" : message
    }
}
