/// Parses the arguments of a command-line tool described by a tree of ``CommandLineCommand``s.
///
/// The grammar is that of swift-argument-parser for options that take a value:
///
/// - `tool <subcommand> [options]`; without a subcommand, the root command's help.
/// - `--name value`, `--name=value`, `-n value`, `-n=value`; a value given separately must not
///   look like an option (`-x...`), `--name=-x` passes one. The last value wins, except for
///   repeatable options, which keep them all.
/// - `--` ends the options; the tool's commands take no positional arguments, so anything after
///   it is an error.
/// - `-h`/`--help` anywhere before `--` prints the help of the command named so far (it wins over
///   any error); `--version` prints the version (it wins over errors, not over help).
/// - `tool help [<subcommand> ...]` prints the help of that subcommand (the root's help if the
///   name is not a subcommand).
///
/// Errors are reported as ``CommandLineError`` with the first problem found. The parser is pure:
/// it neither prints nor exits; see ``CommandLineAction`` for what the caller does.
public struct CommandLineParser: Sendable {
    /// The root command (its ``CommandLineCommand/name`` is the executable's name).
    public var root: CommandLineCommand
    /// The version `--version` prints.
    public var version: String
    /// The width the help wraps option and subcommand descriptions to.
    public var width: Int

    /// Creates a parser.
    public init(root: CommandLineCommand, version: String, width: Int = 80) {
        self.root = root
        self.version = version
        self.width = width
    }

    /// Parses the arguments (without the executable's name, i.e. `CommandLine.arguments.dropFirst()`).
    public func parse(_ arguments: [String]) throws(CommandLineError) -> CommandLineAction {
        var path: [String] = []
        var command = root
        var given: [String: [String]] = [:]
        var firstError: CommandLineError?
        var wantsVersion = false
        var afterTerminator = false
        var index = arguments.startIndex

        func record(_ error: CommandLineError) {
            if firstError == nil { firstError = error }
        }

        /// Reads the value of `option`, typed as `flag`, attached after `=` or in the next argument.
        func takeValue(of option: CommandLineOption, typedAs flag: String, attached: Substring?) {
            let typed = "\(flag) <\(option.valueName)>"
            let value: String
            if let attached {
                value = String(attached)
            } else if index < arguments.endIndex, !Self.looksLikeOption(arguments[index]) {
                value = arguments[index]
                index += 1
            } else {
                value = ""
                record(error(.missingValue, "Missing value for '\(typed)'", path: path, option: option, typed: typed))
                return
            }
            if attached != nil && value.isEmpty {
                record(error(.missingValue, "Missing value for '\(typed)'", path: path, option: option, typed: typed))
                return
            }
            guard let accepted = option.accept(value) else {
                let expected: String
                switch option.kind {
                case .text: expected = "text"
                case .nonNegativeNumber: expected = "a non-negative number"
                case .choice(let words): expected = "one of \(words.joined(separator: ", "))"
                }
                record(
                    error(
                        .invalidValue, "The value '\(value)' is invalid for '\(typed)': expected \(expected)",
                        path: path, option: option, typed: typed))
                return
            }
            if option.isRepeatable {
                given[option.name, default: []].append(accepted)
            } else {
                given[option.name] = [accepted]
            }
        }

        while index < arguments.endIndex {
            let argument = arguments[index]
            index += 1
            if afterTerminator {
                record(error(.unexpectedArgument, "Unexpected argument '\(argument)'", path: path))
            } else if argument == "--" {
                afterTerminator = true
            } else if argument.hasPrefix("--") {
                let (name, attached) = Self.splitAttachedValue(argument.dropFirst(2))
                if name == "help" { return .help(help(for: path)) }
                if name == "version" {
                    wantsVersion = true
                    continue
                }
                guard let option = command.option(named: String(name)) else {
                    var message = "Unknown option '\(argument)'"
                    let candidates = command.options.map(\.name) + ["help", "version"]
                    if !name.isEmpty, let suggestion = KeySuggestion.closest(to: String(name), in: candidates) {
                        message += ". Did you mean '--\(suggestion)'?"
                    }
                    record(error(.unknownOption, message, path: path))
                    continue
                }
                takeValue(of: option, typedAs: "--\(name)", attached: attached)
            } else if argument.hasPrefix("-") && argument.count > 1 {
                let (letters, attached) = Self.splitAttachedValue(argument.dropFirst())
                if letters.isEmpty {
                    record(error(.unknownOption, "Unknown option '\(argument)'", path: path))
                    continue
                }
                for (offset, letter) in letters.enumerated() {
                    if letter == "h" { return .help(help(for: path)) }
                    guard let option = command.option(short: letter) else {
                        record(error(.unknownOption, "Unknown option '\(argument)'", path: path))
                        break
                    }
                    if offset < letters.count - 1 {
                        // `-cfile`: values are never attached to a short option without `=`.
                        let rest = letters.dropFirst(offset + 1)
                        record(
                            error(
                                .unknownOption, "Unknown option '\(argument)'. Did you mean '-\(letter) \(rest)'?",
                                path: path))
                        break
                    }
                    takeValue(of: option, typedAs: "-\(letter)", attached: attached)
                }
            } else if !command.subcommands.isEmpty {
                if path.isEmpty && argument == "help" {
                    return try parseHelpCommand(
                        Array(arguments[index...]), wantsVersion: wantsVersion, pendingError: firstError)
                }
                if let subcommand = command.subcommand(named: argument) {
                    path.append(argument)
                    command = subcommand
                    continue
                }
                var message = "Unknown subcommand '\(argument)'"
                let candidates = command.subcommands.map(\.name)
                if let suggestion = KeySuggestion.closest(to: argument, in: candidates) {
                    message += ". Did you mean '\(suggestion)'?"
                }
                record(error(.unknownSubcommand, message, path: path))
            } else {
                record(error(.unexpectedArgument, "Unexpected argument '\(argument)'", path: path))
            }
        }
        if wantsVersion { return .version(version + "\n") }
        if let firstError { throw firstError }
        if !command.subcommands.isEmpty { return .help(help(for: path)) }
        return .run(ParsedCommandLine(commandPath: path, givenValues: given, options: command.options))
    }

    /// `tool help [<subcommand> ...] [--version] [-h|--help]`.
    private func parseHelpCommand(
        _ arguments: [String], wantsVersion: Bool, pendingError: CommandLineError?
    ) throws(CommandLineError) -> CommandLineAction {
        var wantsVersion = wantsVersion
        var firstError = pendingError
        var target: [String] = []
        var command = root
        var stopped = false
        var afterTerminator = false
        var helpOfHelp = false
        let helpUsage = "\(root.name) help [<subcommand> ...]"
        for argument in arguments {
            if !afterTerminator {
                if argument == "--" {
                    afterTerminator = true
                    continue
                }
                if argument.hasPrefix("-") && argument.count > 1 {
                    let name = argument.hasPrefix("--") ? Self.splitAttachedValue(argument.dropFirst(2)).name : ""
                    if name == "help" || argument == "-h" || argument.hasPrefix("-h=") {
                        return .help(helpCommandHelp())
                    }
                    if name == "version" {
                        wantsVersion = true
                    } else if firstError == nil {
                        firstError = CommandLineError(
                            code: .unknownOption, message: "Unknown option '\(argument)'",
                            commandName: "\(root.name) help", usage: helpUsage)
                    }
                    continue
                }
            }
            if target.isEmpty && !stopped && argument == "help" {
                helpOfHelp = true
                stopped = true
                continue
            }
            if !stopped, let subcommand = command.subcommand(named: argument) {
                target.append(argument)
                command = subcommand
            } else {
                stopped = true
            }
        }
        if wantsVersion { return .version(version + "\n") }
        if let firstError { throw firstError }
        return .help(helpOfHelp ? helpCommandHelp() : help(for: target))
    }

    /// The help text of the command at `path` (subcommand names from the root; unknown names are ignored).
    public func help(for path: [String]) -> String {
        let (command, fullName) = resolve(path)
        var text = "OVERVIEW: \(command.abstract)\n\nUSAGE: \(usage(of: command, fullName: fullName))\n\nOPTIONS:\n"
        for option in command.options {
            text += helpRow(option.helpLabel, option.fullHelp)
        }
        text += helpRow("--version", "Show the version.")
        text += helpRow("-h, --help", "Show help information.")
        if !command.subcommands.isEmpty {
            text += "\nSUBCOMMANDS:\n"
            for subcommand in command.subcommands {
                text += helpRow(subcommand.name, subcommand.abstract)
            }
            text += "\n  See '\(root.name) help <subcommand>' for detailed help.\n"
        }
        return text
    }

    /// The usage line of the command at `path`, e.g. `ble-mqtt-bridge run [--config <file>] [--log-level <level>]`.
    public func usage(for path: [String]) -> String {
        let (command, fullName) = resolve(path)
        return usage(of: command, fullName: fullName)
    }

    /// The help of the `help` subcommand.
    private func helpCommandHelp() -> String {
        "OVERVIEW: Show the help of a subcommand.\n\nUSAGE: \(root.name) help [<subcommand> ...]\n\nOPTIONS:\n"
            + helpRow("--version", "Show the version.") + helpRow("-h, --help", "Show help information.")
    }

    private func usage(of command: CommandLineCommand, fullName: String) -> String {
        if !command.subcommands.isEmpty { return "\(fullName) <subcommand>" }
        var line = fullName
        for option in command.options {
            line += " [\(option.synopsis)\(option.isRepeatable ? " ..." : "")]"
        }
        return line
    }

    /// The command at `path` (stopping at the first unknown name) and its full name (`tool sub`).
    private func resolve(_ path: [String]) -> (CommandLineCommand, String) {
        var command = root
        var fullName = root.name
        for name in path {
            guard let subcommand = command.subcommand(named: name) else { break }
            command = subcommand
            fullName += " " + name
        }
        return (command, fullName)
    }

    private func error(
        _ code: CommandLineError.Code, _ message: String, path: [String], option: CommandLineOption? = nil,
        typed: String? = nil
    ) -> CommandLineError {
        let (command, fullName) = resolve(path)
        return CommandLineError(
            code: code, message: message, commandName: fullName, usage: usage(of: command, fullName: fullName),
            optionHelp: option.map { "\(typed ?? $0.synopsis)  \($0.help)" })
    }

    /// One entry of an `OPTIONS:` or `SUBCOMMANDS:` list: the label, then the text from column 26,
    /// wrapped to ``width`` (on the next line when the label is too long).
    private func helpRow(_ label: String, _ text: String) -> String {
        let column = 26
        let lines = Self.wrap(text, width: max(20, width - column))
        let indent = String(repeating: " ", count: column)
        var row = "  " + label
        var rest = lines[...]
        if row.count + 1 <= column, let first = rest.first {
            row += String(repeating: " ", count: column - row.count) + first
            rest = rest.dropFirst()
        }
        row += "\n"
        for line in rest { row += indent + line + "\n" }
        return row
    }

    /// Splits text into lines of at most `width` characters at spaces (a longer word gets a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if line.isEmpty {
                line = String(word)
            } else if line.count + 1 + word.count <= width {
                line += " " + word
            } else {
                lines.append(line)
                line = String(word)
            }
        }
        lines.append(line)
        return lines
    }

    /// `name=value` → (`name`, `value`); `name` → (`name`, nil).
    static func splitAttachedValue(_ text: Substring) -> (name: Substring, value: Substring?) {
        guard let equals = text.firstIndex(of: "=") else { return (text, nil) }
        return (text[..<equals], text[text.index(after: equals)...])
    }

    /// Whether an argument is an option rather than a value (`-x...`, `--...`; `-` alone is a value).
    static func looksLikeOption(_ argument: String) -> Bool {
        argument.hasPrefix("-") && argument.count > 1
    }
}
