/// A command line the parser does not accept: a usage error (exit status ``exitStatus``).
///
/// Its ``description`` is the complete text for standard error:
///
/// ```
/// Error: Unknown option '--bogus'
/// Usage: ble-mqtt-bridge run [--config <file>] [--log-level <level>]
///   See 'ble-mqtt-bridge run --help' for more information.
/// ```
///
/// with a `Help:` line on the option for a missing or invalid value.
public struct CommandLineError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of problem.
    public enum Code: String, Sendable, Hashable {
        /// An option the command does not have (`--bogus`, `-x`, `-cfile`).
        case unknownOption = "unknown_option"
        /// An option without its value (at the end, before another option, or `--name=`).
        case missingValue = "missing_value"
        /// A value the option does not accept (not a number, not one of the choices).
        case invalidValue = "invalid_value"
        /// A first argument that names no subcommand.
        case unknownSubcommand = "unknown_subcommand"
        /// An argument where none is expected (after a subcommand, or after `--`).
        case unexpectedArgument = "unexpected_argument"
    }

    /// The exit status for usage errors (`EX_USAGE` of sysexits.h, as swift-argument-parser uses).
    public static let exitStatus: Int32 = 64

    /// The kind of problem.
    public var code: Code
    /// What is wrong, without the `Error: ` prefix, e.g. `Unknown option '--bogus'`.
    public var message: String
    /// The full name of the command whose arguments are wrong, e.g. `ble-mqtt-bridge run`.
    public var commandName: String
    /// The command's usage line, without `Usage: `.
    public var usage: String
    /// For an option's value: the option's synopsis and help, e.g. `--config <file>  The configuration file.`
    public var optionHelp: String?

    /// Creates an error.
    public init(code: Code, message: String, commandName: String, usage: String, optionHelp: String? = nil) {
        self.code = code
        self.message = message
        self.commandName = commandName
        self.usage = usage
        self.optionHelp = optionHelp
    }

    /// The text for standard error (several lines, ends with a newline).
    public var description: String {
        var text = "Error: \(message)\n"
        if let optionHelp { text += "Help:  \(optionHelp)\n" }
        text += "Usage: \(usage)\n"
        text += "  See '\(commandName) --help' for more information.\n"
        return text
    }
}
