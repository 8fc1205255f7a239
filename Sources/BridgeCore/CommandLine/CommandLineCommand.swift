/// A command of a command-line tool: the root command (the executable) or a subcommand.
///
/// A command either has subcommands (then it only dispatches to them, and shows its help
/// when none is given) or options and an action; it takes no positional arguments.
public struct CommandLineCommand: Sendable, Hashable {
    /// The name typed on the command line; for the root command, the executable's name.
    public var name: String
    /// One sentence saying what the command does (the help's `OVERVIEW`, the subcommand list).
    public var abstract: String
    /// The command's options, in the order the help lists them (`--help` and `--version` are implicit).
    public var options: [CommandLineOption]
    /// The command's subcommands, in the order the help lists them.
    public var subcommands: [CommandLineCommand]

    /// Creates a command description.
    public init(
        name: String, abstract: String, options: [CommandLineOption] = [], subcommands: [CommandLineCommand] = []
    ) {
        self.name = name
        self.abstract = abstract
        self.options = options
        self.subcommands = subcommands
    }

    /// The subcommand with this name, if any.
    public func subcommand(named name: String) -> CommandLineCommand? {
        subcommands.first { $0.name == name }
    }

    /// The option with this long name (without the dashes), if any.
    public func option(named name: String) -> CommandLineOption? {
        options.first { $0.name == name }
    }

    /// The option with this short name, if any.
    public func option(short: Character) -> CommandLineOption? {
        options.first { $0.shortName == short }
    }
}
