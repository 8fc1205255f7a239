import Testing

@testable import BridgeCore

/// ``CommandLineParser`` on the bridge's own command line (``BridgeCommandLine``) and on small trees.
@Suite struct CommandLineParserTests {
    let parser = BridgeCommandLine.parser

    /// The parsed command, or `nil` (with a recorded issue) if the arguments ask for something else.
    func parsed(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> ParsedCommandLine? {
        do throws(CommandLineError) {
            if case .run(let command) = try parser.parse(arguments) { return command }
            Issue.record("\(arguments) did not parse to a command", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(arguments): \(error)", sourceLocation: sourceLocation)
        }
        return nil
    }

    /// The error the arguments give, or `nil` (with a recorded issue) if they parse.
    func failure(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) -> CommandLineError? {
        do throws(CommandLineError) {
            let action = try parser.parse(arguments)
            Issue.record("\(arguments) parsed: \(action)", sourceLocation: sourceLocation)
            return nil
        } catch {
            return error
        }
    }

    /// The help text the arguments ask for, or `nil`.
    func helpText(_ arguments: [String]) -> String? {
        guard case .help(let text) = try? parser.parse(arguments) else { return nil }
        return text
    }

    // MARK: - Commands and defaults

    @Test func runDefaults() throws {
        let command = try #require(parsed(["run"]))
        #expect(command.commandPath == ["run"])
        #expect(command.value("config") == "bridge.yaml")
        #expect(!command.isGiven("config"))
        #expect(command.value("log-level") == nil)
        #expect(command.givenValues.isEmpty)
    }

    @Test(arguments: [
        ["run", "--config", "x.yaml"],
        ["run", "--config=x.yaml"],
        ["run", "-c", "x.yaml"],
        ["run", "-c=x.yaml"],
        ["run", "--config", "other.yaml", "-c", "x.yaml"],
        ["run", "-c", "other.yaml", "--config=x.yaml", "--"],
    ])
    func configForms(arguments: [String]) throws {
        let command = try #require(parsed(arguments))
        #expect(command.commandPath == ["run"])
        #expect(command.value("config") == "x.yaml")
        #expect(command.isGiven("config"))
        #expect(command.givenValues["config"] == ["x.yaml"])
    }

    @Test func valuesThatLookOdd() throws {
        #expect(parsed(["check-config", "--config", ""])?.value("config") == "")
        #expect(parsed(["check-config", "--config", "-"])?.value("config") == "-")
        #expect(parsed(["check-config", "--config=-x.yaml"])?.value("config") == "-x.yaml")
        #expect(parsed(["check-config", "--config=a=b"])?.value("config") == "a=b")
        #expect(parsed(["check-config", "-c", "with space.yaml"])?.value("config") == "with space.yaml")
    }

    @Test func checkConfig() throws {
        let command = try #require(parsed(["check-config", "-c", "b.yaml"]))
        #expect(command.commandPath == ["check-config"])
        #expect(command.value("config") == "b.yaml")
        #expect(parsed(["check-config"])?.value("config") == "bridge.yaml")
    }

    @Test func logLevelIsCaseInsensitiveAndCanonical() throws {
        #expect(parsed(["run", "--log-level", "debug"])?.value("log-level") == "debug")
        #expect(parsed(["run", "--log-level=DEBUG"])?.value("log-level") == "debug")
        #expect(parsed(["run", "--log-level", "Critical"])?.value("log-level") == "critical")
        for level in BridgeCommandLine.logLevels {
            #expect(parsed(["run", "--log-level", level])?.value("log-level") == level)
        }
    }

    @Test func scanDefaults() throws {
        let command = try #require(parsed(["scan"]))
        #expect(command.commandPath == ["scan"])
        #expect(command.number("seconds") == 10)
        #expect(command.allValues("service") == [])
        #expect(command.value("adapter") == "hci0")
        #expect(command.value("log-level") == "warning")
    }

    @Test func scanOptions() throws {
        let command = try #require(
            parsed([
                "scan", "--seconds", "3.5", "--service", "180d", "--service=180F", "--adapter", "hci1",
                "--log-level", "trace", "--service", "0000ffe0-0000-1000-8000-00805f9b34fb",
            ]))
        #expect(command.number("seconds") == 3.5)
        #expect(command.allValues("service") == ["180d", "180F", "0000ffe0-0000-1000-8000-00805f9b34fb"])
        #expect(command.value("service") == "0000ffe0-0000-1000-8000-00805f9b34fb")
        #expect(command.value("adapter") == "hci1")
        #expect(command.value("log-level") == "trace")
    }

    @Test(arguments: [("0", 0.0), ("1e1", 10.0), ("0.25", 0.25), ("0x10", 16.0), ("7", 7.0)])
    func secondsNumbers(text: String, value: Double) throws {
        #expect(parsed(["scan", "--seconds", text])?.number("seconds") == value)
        #expect(parsed(["scan", "--seconds=\(text)"])?.number("seconds") == value)
    }

    // MARK: - Help and version

    @Test(arguments: [[], ["--help"], ["-h"], ["help"], ["--help=x"], ["help", "bogus"], ["--help", "run"], ["-h", "scan"]])
    func rootHelp(arguments: [String]) throws {
        let text = try #require(helpText(arguments))
        #expect(text.hasPrefix("OVERVIEW: Bridges Bluetooth LE peripherals (through BlueZ) to an MQTT broker.\n"))
        #expect(text.contains("USAGE: ble-mqtt-bridge <subcommand>\n"))
        #expect(text.contains("\nSUBCOMMANDS:\n"))
        #expect(text.contains("  run                     Run the bridge until SIGINT or SIGTERM.\n"))
        #expect(text.contains("  check-config            Validate a configuration file.\n"))
        #expect(text.contains("  scan                    List nearby LE peripherals as they are found.\n"))
        #expect(text.contains("  --version               Show the version.\n"))
        #expect(text.contains("  -h, --help              Show help information.\n"))
        #expect(text.contains("See 'ble-mqtt-bridge help <subcommand>' for detailed help."))
    }

    @Test(arguments: [
        ["run", "--help"], ["run", "-h"], ["help", "run"], ["run", "--bogus", "--help"], ["run", "--help", "--bogus"],
        ["run", "-hc", "x"], ["run", "--version", "--help"], ["run", "--config", "--help"], ["run", "extra", "-h"],
        ["help", "--", "run"], ["help", "run", "scan"], ["run", "--help", "--", "x"],
    ])
    func runHelp(arguments: [String]) throws {
        let text = try #require(helpText(arguments))
        #expect(text.hasPrefix("OVERVIEW: Run the bridge until SIGINT or SIGTERM.\n"))
        #expect(text.contains("USAGE: ble-mqtt-bridge run [--config <file>] [--log-level <level>]\n"))
        #expect(text.contains("  -c, --config <file>     The configuration file. (default: bridge.yaml)\n"))
        #expect(text.contains("  --log-level <level>     "))
        #expect(text.contains("trace, debug, info, notice, warning, error, critical"))
        #expect(text.contains("  --version               Show the version.\n"))
        #expect(text.contains("  -h, --help              Show help information.\n"))
        #expect(!text.contains("SUBCOMMANDS"))
    }

    @Test func scanAndCheckConfigHelp() throws {
        let scan = try #require(helpText(["scan", "--help"]))
        #expect(scan.hasPrefix("OVERVIEW: List nearby LE peripherals as they are found.\n"))
        #expect(
            scan.contains(
                "USAGE: ble-mqtt-bridge scan [--seconds <seconds>] [--service <uuid> ...] [--adapter <adapter>] [--irk <hex> ...] [--log-level <level>]\n"
            ))
        #expect(scan.contains("  --seconds <seconds>     Stop after this many seconds. (default: 10)\n"))
        #expect(scan.contains("  --service <uuid>        Only peripherals advertising this service\n"))
        #expect(scan.contains("(repeatable)"))
        #expect(scan.contains("  --adapter <adapter>     The adapter (hci0 or /org/bluez/hci0). (default: hci0)\n"))
        #expect(scan.contains("  --irk <hex>             An identity resolving key"), "\(scan)")
        #expect(scan.contains("(default: warning)"))
        #expect(helpText(["help", "scan"]) == scan)

        let check = try #require(helpText(["check-config", "-h"]))
        #expect(check.contains("USAGE: ble-mqtt-bridge check-config [--config <file>]\n"))
        #expect(check.contains("-c, --config <file>"))
        #expect(!check.contains("--log-level"))
        #expect(helpText(["help", "check-config"]) == check)
    }

    @Test func helpLinesFitTheWidth() throws {
        for arguments in [["--help"], ["run", "--help"], ["check-config", "--help"], ["scan", "--help"]] {
            let text = try #require(helpText(arguments))
            for line in text.split(separator: "\n") where !line.hasPrefix("USAGE:") {
                #expect(line.count <= 80, "\(arguments): \(line)")
            }
        }
    }

    @Test(arguments: [["help", "help"], ["help", "-h"], ["help", "--help"], ["help", "run", "--help"]])
    func helpOfHelp(arguments: [String]) throws {
        let text = try #require(helpText(arguments))
        #expect(text.contains("USAGE: ble-mqtt-bridge help [<subcommand> ...]\n"))
    }

    @Test(arguments: [
        ["--version"], ["run", "--version"], ["check-config", "--version"], ["scan", "--version"],
        ["--version", "run"], ["--version=1"], ["--version", "bogus"], ["check-config", "--bogus", "--version"],
        ["check-config", "--version", "--bogus"], ["help", "--version"], ["help", "run", "--version"],
        ["scan", "--seconds", "abc", "--version"],
    ])
    func version(arguments: [String]) throws {
        #expect(try parser.parse(arguments) == .version("0.1.0\n"))
    }

    @Test func helpWinsOverVersion() throws {
        #expect(helpText(["--version", "--help"])?.hasPrefix("OVERVIEW: Bridges") == true)
        #expect(helpText(["--help", "--version"])?.hasPrefix("OVERVIEW: Bridges") == true)
    }

    // MARK: - Errors

    @Test func unknownOption() throws {
        let error = try #require(failure(["run", "--bogus"]))
        #expect(error.code == .unknownOption)
        #expect(error.message == "Unknown option '--bogus'")
        #expect(
            error.description == """
                Error: Unknown option '--bogus'
                Usage: ble-mqtt-bridge run [--config <file>] [--log-level <level>]
                  See 'ble-mqtt-bridge run --help' for more information.

                """)
        #expect(CommandLineError.exitStatus == 64)
    }

    @Test func unknownOptionSuggestions() throws {
        #expect(failure(["run", "--confg", "x"])?.message == "Unknown option '--confg'. Did you mean '--config'?")
        #expect(failure(["run", "--con", "x"])?.message == "Unknown option '--con'. Did you mean '--config'?")
        #expect(failure(["scan", "--second", "3"])?.message == "Unknown option '--second'. Did you mean '--seconds'?")
        #expect(failure(["scan", "--verison"])?.message == "Unknown option '--verison'. Did you mean '--version'?")
        #expect(failure(["run", "--xyzzy"])?.message == "Unknown option '--xyzzy'")
    }

    @Test(arguments: [
        (["--bogus"], "Unknown option '--bogus'", "ble-mqtt-bridge"),
        (["-x"], "Unknown option '-x'", "ble-mqtt-bridge"),
        (["run", "-x"], "Unknown option '-x'", "ble-mqtt-bridge run"),
        (["run", "-"], "Unexpected argument '-'", "ble-mqtt-bridge run"),
        (["run", "-=x"], "Unknown option '-=x'", "ble-mqtt-bridge run"),
        (["run", "--=x"], "Unknown option '--=x'", "ble-mqtt-bridge run"),
        (["run", "---config", "x"], "Unknown option '---config'. Did you mean '--config'?", "ble-mqtt-bridge run"),
        (["run", "--seconds", "3"], "Unknown option '--seconds'", "ble-mqtt-bridge run"),
        (["check-config", "--log-level", "debug"], "Unknown option '--log-level'", "ble-mqtt-bridge check-config"),
        (["run", "-cfile.yaml"], "Unknown option '-cfile.yaml'. Did you mean '-c file.yaml'?", "ble-mqtt-bridge run"),
        (["run", "-ch"], "Unknown option '-ch'. Did you mean '-c h'?", "ble-mqtt-bridge run"),
    ])
    func unknownOptions(arguments: [String], message: String, commandName: String) throws {
        let error = try #require(failure(arguments))
        #expect(error.message == message)
        #expect(error.commandName == commandName)
        #expect(error.description.contains("See '\(commandName) --help' for more information."))
    }

    @Test(arguments: [
        (["run", "--config"], "--config <file>"),
        (["run", "-c"], "-c <file>"),
        (["run", "--config="], "--config <file>"),
        (["run", "-c="], "-c <file>"),
        (["run", "--config", "--log-level", "debug"], "--config <file>"),
        (["run", "--config", "--"], "--config <file>"),
        (["run", "--log-level="], "--log-level <level>"),
        (["scan", "--seconds"], "--seconds <seconds>"),
        (["scan", "--seconds", "-5"], "--seconds <seconds>"),
        (["scan", "--service"], "--service <uuid>"),
        (["scan", "--adapter", "--service", "180d"], "--adapter <adapter>"),
    ])
    func missingValue(arguments: [String], typed: String) throws {
        let error = try #require(failure(arguments))
        #expect(error.code == .missingValue)
        #expect(error.message == "Missing value for '\(typed)'")
        #expect(error.optionHelp?.hasPrefix("\(typed)  ") == true)
        #expect(error.description.contains("\nHelp:  \(typed)  "))
    }

    @Test(arguments: [
        ["scan", "--seconds", "abc"], ["scan", "--seconds=abc"], ["scan", "--seconds", ""], ["scan", "--seconds", " 3"],
        ["scan", "--seconds=-5"], ["scan", "--seconds", "nan"], ["scan", "--seconds", "inf"],
        ["scan", "--seconds=-inf"], ["scan", "--seconds", "1s"],
    ])
    func invalidNumber(arguments: [String]) throws {
        let error = try #require(failure(arguments))
        #expect(error.code == .invalidValue)
        #expect(error.message.hasPrefix("The value '"))
        #expect(error.message.hasSuffix("' is invalid for '--seconds <seconds>': expected a non-negative number"))
        #expect(error.optionHelp == "--seconds <seconds>  Stop after this many seconds.")
        #expect(error.usage.hasPrefix("ble-mqtt-bridge scan [--seconds <seconds>]"))
    }

    @Test func invalidChoice() throws {
        let error = try #require(failure(["run", "--log-level", "loud"]))
        #expect(error.code == .invalidValue)
        #expect(
            error.message
                == "The value 'loud' is invalid for '--log-level <level>': expected one of trace, debug, info, notice, warning, error, critical"
        )
        #expect(failure(["scan", "--log-level="])?.code == .missingValue)
    }

    @Test func unknownSubcommand() throws {
        let error = try #require(failure(["bogus"]))
        #expect(error.code == .unknownSubcommand)
        #expect(error.message == "Unknown subcommand 'bogus'")
        #expect(error.usage == "ble-mqtt-bridge <subcommand>")
        #expect(error.description.contains("See 'ble-mqtt-bridge --help' for more information."))
        #expect(failure(["scn"])?.message == "Unknown subcommand 'scn'. Did you mean 'scan'?")
        #expect(failure(["check"])?.message == "Unknown subcommand 'check'. Did you mean 'check-config'?")
        #expect(failure(["Run"])?.code == .unknownSubcommand)
    }

    @Test(arguments: [
        (["run", "extra"], "extra", "ble-mqtt-bridge run"),
        (["check-config", "bridge.yaml"], "bridge.yaml", "ble-mqtt-bridge check-config"),
        (["run", "help"], "help", "ble-mqtt-bridge run"),
        (["run", "--", "--config"], "--config", "ble-mqtt-bridge run"),
        (["run", "--", "--help"], "--help", "ble-mqtt-bridge run"),
        (["--", "run"], "run", "ble-mqtt-bridge"),
        (["scan", "--", "x"], "x", "ble-mqtt-bridge scan"),
    ])
    func unexpectedArgument(arguments: [String], argument: String, commandName: String) throws {
        let error = try #require(failure(arguments))
        #expect(error.code == .unexpectedArgument)
        #expect(error.message == "Unexpected argument '\(argument)'")
        #expect(error.commandName == commandName)
    }

    @Test func firstErrorIsReported() throws {
        #expect(failure(["run", "--bogus", "extra"])?.code == .unknownOption)
        #expect(failure(["run", "extra", "--bogus"])?.code == .unexpectedArgument)
        #expect(failure(["scan", "--seconds", "x", "--adapter"])?.code == .invalidValue)
        #expect(failure(["bogus", "run"])?.code == .unknownSubcommand)
    }

    @Test func helpCommandErrors() throws {
        let error = try #require(failure(["help", "run", "--bogus"]))
        #expect(error.code == .unknownOption)
        #expect(error.usage == "ble-mqtt-bridge help [<subcommand> ...]")
        #expect(failure(["--bogus", "help", "run"])?.code == .unknownOption)
    }

    // MARK: - Other trees

    @Test func nestedSubcommandsAndFlagsOnTheRoot() throws {
        let leaf = CommandLineCommand(
            name: "leaf", abstract: "A leaf.",
            options: [CommandLineOption(name: "mode", shortName: "m", valueName: "mode", help: "Mode.", kind: .choice(["Fast", "slow"]))])
        let middle = CommandLineCommand(name: "middle", abstract: "A group.", subcommands: [leaf])
        let tool = CommandLineParser(
            root: CommandLineCommand(name: "tool", abstract: "A tool.", subcommands: [middle]), version: "2.0", width: 60)
        guard case .run(let command) = try tool.parse(["middle", "leaf", "-m", "FAST"]) else {
            Issue.record("did not run")
            return
        }
        #expect(command.commandPath == ["middle", "leaf"])
        #expect(command.value("mode") == "Fast")
        guard case .help(let groupHelp) = try tool.parse(["middle"]) else {
            Issue.record("no help")
            return
        }
        #expect(groupHelp.contains("USAGE: tool middle <subcommand>\n"))
        #expect(groupHelp.contains("  leaf                    A leaf.\n"))
        #expect(try tool.parse(["help", "middle", "leaf"]) == .help(tool.help(for: ["middle", "leaf"])))
        #expect(tool.usage(for: ["middle", "leaf"]) == "tool middle leaf [--mode <mode>]")
        #expect(try tool.parse(["middle", "leaf", "--version"]) == .version("2.0\n"))
        #expect(throws: CommandLineError.self) { try tool.parse(["middle", "bogus"]) }
    }

    @Test func longLabelsAndWrapping() {
        let option = CommandLineOption(
            name: "a-very-long-option-name", valueName: "value",
            help: "Words that need wrapping because there are far too many of them to fit on a single line of the help.")
        let tool = CommandLineParser(
            root: CommandLineCommand(name: "tool", abstract: "A tool.", options: [option]), version: "1", width: 60)
        let text = tool.help(for: [])
        #expect(text.contains("\n  --a-very-long-option-name <value>\n                          Words that need"))
        for line in text.split(separator: "\n") where !line.hasPrefix("USAGE:") {
            #expect(line.count <= 60, "\(line)")
        }
        #expect(CommandLineParser.wrap("a b c", width: 3) == ["a b", "c"])
        #expect(CommandLineParser.wrap("abcdef g", width: 3) == ["abcdef", "g"])
        #expect(CommandLineParser.wrap("", width: 10) == [""])
    }

    @Test func optionAcceptsValues() {
        let number = CommandLineOption(name: "n", valueName: "n", help: "", kind: .nonNegativeNumber)
        #expect(number.accept("0") == "0")
        #expect(number.accept("-0.5") == nil)
        #expect(number.accept("infinity") == nil)
        let text = CommandLineOption(name: "t", shortName: "t", valueName: "text", help: "Text.", defaultValue: "x")
        #expect(text.accept("") == "")
        #expect(text.helpLabel == "-t, --t <text>")
        #expect(text.fullHelp == "Text. (default: x)")
        let choice = CommandLineOption(name: "c", valueName: "c", help: "C.", kind: .choice(["One", "two"]))
        #expect(choice.accept("one") == "One")
        #expect(choice.accept("TWO") == "two")
        #expect(choice.accept("three") == nil)
        #expect(choice.fullHelp == "C. (values: One, two)")
    }
}
