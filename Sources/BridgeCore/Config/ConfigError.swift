/// An error in `bridge.yaml`, located at the offending node.
///
/// Its description is exactly `file:line:column: message` (1-based line and
/// column, columns counted in Unicode scalars), the format editors and CI
/// tools recognise. Errors that concern the file as a whole (it cannot be
/// read) have line and column 0 and print as `file: message`.
public struct ConfigError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// The file cannot be read.
        case unreadableFile = "unreadable_file"
        /// The YAML is malformed.
        case yamlSyntax = "yaml_syntax"
        /// A key the configuration does not know.
        case unknownKey = "unknown_key"
        /// A key given twice in the same mapping.
        case duplicateKey = "duplicate_key"
        /// A required key is missing.
        case missingKey = "missing_key"
        /// A value of the wrong YAML type (e.g. a list where a string is expected).
        case wrongType = "wrong_type"
        /// A malformed duration.
        case invalidDuration = "invalid_duration"
        /// A malformed Bluetooth UUID.
        case invalidUUID = "invalid_uuid"
        /// A malformed Bluetooth address.
        case invalidAddress = "invalid_address"
        /// A malformed broker URL or one with a scheme other than `mqtt`/`mqtts`.
        case invalidURL = "invalid_url"
        /// An unknown value format name.
        case invalidFormat = "invalid_format"
        /// A name that cannot be an MQTT topic segment.
        case invalidName = "invalid_name"
        /// Two devices with the same name (or two entries for the same UUID).
        case duplicateName = "duplicate_name"
        /// `${VAR}` of a variable that is not set and has no default.
        case undefinedVariable = "undefined_variable"
        /// Any other value out of its allowed set or range.
        case invalidValue = "invalid_value"
        /// A setting that has no effect (reported as a warning, see ``BridgeConfig/warnings``).
        case ignoredSetting = "ignored_setting"
        /// A valid setting this version cannot act on yet (see ``BridgeConfig/unsupported``).
        case unsupportedSetting = "unsupported_setting"
    }

    /// The kind of problem.
    public var code: Code
    /// The file name as given to the loader.
    public var file: String
    /// 1-based line, 0 when the error concerns the whole file.
    public var line: Int
    /// 1-based column (in Unicode scalars), 0 when the error concerns the whole file.
    public var column: Int
    /// What is wrong, e.g. `unknown key 'bas_topic' in 'mqtt' (did you mean 'base_topic'?)`.
    public var message: String

    /// Creates an error.
    public init(code: Code, file: String, line: Int, column: Int, message: String) {
        self.code = code
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// More errors the loader found after this one (each reported the same way).
    public var further: [ConfigError] = []

    /// This error and the further ones, in file order of discovery.
    public var all: [ConfigError] { [self] + further.map { var e = $0; e.further = []; return e } }

    /// `file:line:column: message`.
    public var description: String {
        if line == 0 { return "\(file): \(message)" }
        return "\(file):\(line):\(column): \(message)"
    }
}
