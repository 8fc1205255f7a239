/// The command line of `ble-mqtt-bridge` (SPEC §2): its commands, options and version.
public enum BridgeCommandLine {
    /// The bridge's version, printed by `--version`.
    public static let version = "0.1.0"

    /// The log levels `--log-level` accepts (those of swift-log's `Logger.Level`).
    public static let logLevels = ["trace", "debug", "info", "notice", "warning", "error", "critical"]

    /// `-c, --config <file>` of `run` and `check-config`.
    public static let configOption = CommandLineOption(
        name: "config", shortName: "c", valueName: "file", help: "The configuration file.",
        defaultValue: "bridge.yaml")

    /// `ble-mqtt-bridge run`.
    public static let run = CommandLineCommand(
        name: "run", abstract: "Run the bridge until SIGINT or SIGTERM.",
        options: [
            configOption,
            CommandLineOption(
                name: "log-level", valueName: "level",
                help: "The log level; overrides log_level of the configuration file (info if neither is set).",
                kind: .choice(logLevels)),
        ])

    /// `ble-mqtt-bridge check-config`.
    public static let checkConfig = CommandLineCommand(
        name: "check-config", abstract: "Validate a configuration file.", options: [configOption])

    /// `ble-mqtt-bridge scan`.
    public static let scan = CommandLineCommand(
        name: "scan", abstract: "List nearby LE peripherals as they are found.",
        options: [
            CommandLineOption(
                name: "seconds", valueName: "seconds", help: "Stop after this many seconds.",
                kind: .nonNegativeNumber, defaultValue: "10"),
            CommandLineOption(
                name: "service", valueName: "uuid", help: "Only peripherals advertising this service (repeatable).",
                isRepeatable: true),
            CommandLineOption(
                name: "adapter", valueName: "adapter", help: "The adapter (hci0 or /org/bluez/hci0).",
                defaultValue: "hci0"),
            CommandLineOption(
                name: "irk", valueName: "hex",
                help: "An identity resolving key (32 hex digits): mark the addresses that resolve to it (repeatable).",
                isRepeatable: true),
            CommandLineOption(
                name: "log-level", valueName: "level", help: "The log level.", kind: .choice(logLevels),
                defaultValue: "warning"),
        ])

    /// `ble-mqtt-bridge web`: the bridge's page (SPEC §14), the executable `ble-mqtt-bridge-web` beside this one.
    public static let web = CommandLineCommand(
        name: "web", abstract: "Serve the bridge's page over HTTP (a process of its own that talks only MQTT).",
        options: [
            configOption,
            CommandLineOption(
                name: "listen", valueName: "host:port", help: "Where to listen; overrides web.listen of the configuration file."),
            CommandLineOption(
                name: "log-level", valueName: "level",
                help: "The log level; overrides log_level of the configuration file (info if neither is set).",
                kind: .choice(logLevels)),
        ])

    /// The page's executable, installed beside `ble-mqtt-bridge`.
    public static let webExecutable = "ble-mqtt-bridge-web"

    /// The root command, `ble-mqtt-bridge`.
    public static let root = CommandLineCommand(
        name: "ble-mqtt-bridge", abstract: "Bridges Bluetooth LE peripherals (through BlueZ) to an MQTT broker.",
        subcommands: [run, checkConfig, scan, web])

    /// The parser of the bridge's command line.
    public static let parser = CommandLineParser(root: root, version: version)
}
