import BridgeCore
import ConfigLoader
import Logging
import ServiceLifecycle
import UnixSignals
import WebUI

#if canImport(Glibc)
import Glibc
#endif

@main
enum Main {
    static func main() async {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        exit(await WebCommand.main(Array(CommandLine.arguments.dropFirst())))
    }
}

/// `ble-mqtt-bridge-web --config bridge.yaml [--listen ADDR:PORT] [--log-level L]`: the bridge's page (SPEC §14).
enum WebCommand {
    static let root = CommandLineCommand(
        name: "ble-mqtt-bridge-web",
        abstract: "Serve the bridge's page over HTTP; it talks only MQTT to the broker.",
        options: [
            BridgeCommandLine.configOption,
            CommandLineOption(
                name: "listen", valueName: "host:port",
                help: "The address to listen on; overrides web.listen of the configuration file."),
            CommandLineOption(
                name: "log-level", valueName: "level",
                help: "The log level; overrides log_level of the configuration file (info if neither is set).",
                kind: .choice(BridgeCommandLine.logLevels)),
        ])

    /// Parses the arguments, runs the server, returns the exit status (64 usage, 2 configuration, 1 failure).
    static func main(_ arguments: [String]) async -> Int32 {
        let action: CommandLineAction
        do throws(CommandLineError) {
            action = try CommandLineParser(root: root, version: BridgeCommandLine.version).parse(arguments)
        } catch {
            printError(error.description, newline: false)
            return CommandLineError.exitStatus
        }
        switch action {
        case .help(let text), .version(let text):
            writeAll(1, text)
            return 0
        case .run(let command):
            return await run(command)
        }
    }

    static func run(_ command: ParsedCommandLine) async -> Int32 {
        let path = command.value("config") ?? "bridge.yaml"
        let config: BridgeConfig
        do {
            config = try BridgeConfig.load(path: path)
        } catch {
            for e in error.all { printError("\(e)") }
            return 2
        }
        let settings: WebSettings
        do throws(WebError) {
            settings = try WebSettings(config: config, listen: command.value("listen"))
        } catch {
            printError("Error: \(error.message)")
            return 2
        }
        let level = command.value("log-level").flatMap { Logger.Level(rawValue: $0) } ?? config.logLevel ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "ble-mqtt-bridge-web")
        logger.logLevel = level
        logger.info("ble-mqtt-bridge-web \(BridgeCommandLine.version) starting with \(path)")
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(
                    service: WebServer(
                        settings: settings, mqtt: WebServer.mqttConfiguration(for: config), logger: logger),
                    successTerminationBehavior: .gracefullyShutdownGroup)
            ],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger)
        configuration.maximumGracefulShutdownDuration = .seconds(5)
        do {
            try await ServiceGroup(configuration: configuration).run()
            return 0
        } catch {
            printError("Error: \(error)")
            return 1
        }
    }

    static func printError(_ text: String, newline: Bool = true) {
        writeAll(2, newline ? text + "\n" : text)
    }
}
