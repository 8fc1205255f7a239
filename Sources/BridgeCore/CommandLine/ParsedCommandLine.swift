/// A command to run and its option values, checked against the command's description.
public struct ParsedCommandLine: Sendable, Hashable {
    /// The subcommand names from the root to the command to run, e.g. `["run"]`.
    public var commandPath: [String]
    /// The values given, by option name, in the order given (choices in their canonical spelling).
    public var givenValues: [String: [String]]
    /// The options of the command to run (for their defaults).
    public var options: [CommandLineOption]

    /// Creates a parsed command line.
    public init(commandPath: [String], givenValues: [String: [String]], options: [CommandLineOption]) {
        self.commandPath = commandPath
        self.givenValues = givenValues
        self.options = options
    }

    /// Whether the option was given at least once.
    public func isGiven(_ name: String) -> Bool {
        givenValues[name] != nil
    }

    /// The option's last value given, else its default, else `nil`.
    public func value(_ name: String) -> String? {
        givenValues[name]?.last ?? options.first { $0.name == name }?.defaultValue
    }

    /// All the values given for a repeatable option, in order (empty if none; defaults do not apply).
    public func allValues(_ name: String) -> [String] {
        givenValues[name] ?? []
    }

    /// The value of a ``CommandLineOption/Kind/nonNegativeNumber`` option (given or default), as a number.
    public func number(_ name: String) -> Double? {
        value(name).flatMap { Double($0) }
    }
}
