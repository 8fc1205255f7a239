/// What a command line asks for, as ``CommandLineParser/parse(_:)`` found it.
public enum CommandLineAction: Sendable, Hashable {
    /// Print this help text (ends with a newline) on standard output and exit 0.
    case help(String)
    /// Print this version (one line, ends with a newline) on standard output and exit 0.
    case version(String)
    /// Run a command with these options.
    case run(ParsedCommandLine)
}
