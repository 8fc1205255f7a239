import ArgumentParser
import BlueZ
import Bridge
import BridgeCore
import DBusKit
import Logging
import ServiceLifecycle

#if canImport(Glibc)
import Glibc
#endif

@main
enum Main {
    static func main() async {
        // A parent may start us with SIGTERM/SIGINT blocked (Foundation.Process from a Dispatch
        // thread does): unblock them on the main thread, or a stop request would stay pending forever.
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGTERM)
        sigaddset(&set, SIGINT)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        await BridgeCommand.main()
    }
}

struct BridgeCommand: AsyncParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "ble-mqtt-bridge",
        abstract: "Bridges Bluetooth LE peripherals (through BlueZ) to an MQTT broker.",
        version: version,
        subcommands: [Run.self, CheckConfig.self, Scan.self])
}

/// Options shared by the subcommands.
struct LogOptions: ParsableArguments {
    @Option(name: .long, help: "Log level: trace, debug, info, notice, warning, error, critical.")
    var logLevel: Logger.Level?

    func bootstrap(configLevel: Logger.Level? = nil) -> Logger {
        let level = logLevel ?? configLevel ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var logger = Logger(label: "ble-mqtt-bridge")
        logger.logLevel = level
        return logger
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

func loadConfig(_ path: String) throws -> BridgeConfig {
    do {
        let config = try BridgeConfig.load(path: path)
        for w in config.warnings { printError("warning: \(w)") }
        return config
    } catch {
        printError("\(error)")
        throw ExitCode(2)
    }
}

func printError(_ text: String) {
    var line = text + "\n"
    line.withUTF8 { buf in _ = write(2, buf.baseAddress, buf.count) }
}

extension BridgeCommand {
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the bridge until SIGINT or SIGTERM.", version: BridgeCommand.version)

        @Option(name: .shortAndLong, help: "The configuration file.")
        var config: String = "bridge.yaml"

        @OptionGroup var log: LogOptions

        func run() async throws {
            let cfg = try loadConfig(config)
            let logger = log.bootstrap(configLevel: cfg.logLevel)
            logger.info("ble-mqtt-bridge \(BridgeCommand.version) starting with \(config)")
            let service = BridgeService(config: cfg, logger: logger)
            let group = ServiceGroup(
                configuration: .init(
                    services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger))
            try await group.run()
        }
    }

    struct CheckConfig: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "check-config", abstract: "Validate a configuration file.", version: BridgeCommand.version)

        @Option(name: .shortAndLong, help: "The configuration file.")
        var config: String = "bridge.yaml"

        func run() async throws {
            let cfg = try loadConfig(config)
            print("\(config): ok (\(cfg.bluetooth.services.count) services, \(cfg.devices.count) devices, broker \(cfg.mqtt.url))")
        }
    }

    struct Scan: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List nearby LE peripherals as they are found.", version: BridgeCommand.version)

        @Option(help: "Stop after this many seconds.")
        var seconds: Double = 10

        @Option(name: .long, parsing: .singleValue, help: "Only peripherals advertising this service (repeatable).")
        var service: [String] = []

        @Option(help: "The adapter (hci0 or /org/bluez/hci0).")
        var adapter: String = "hci0"

        @OptionGroup var log: LogOptions

        func run() async throws {
            var logger = log.bootstrap()
            if log.logLevel == nil { logger.logLevel = .warning }
            var uuids: [String] = []
            for s in service {
                guard let u = BluetoothUUID(s) else {
                    printError("error: '\(s)' is not a Bluetooth UUID")
                    throw ExitCode(2)
                }
                uuids.append(u.uuidString)
            }
            let adapterPath = adapter.hasPrefix("/") ? adapter : "/org/bluez/\(adapter)"
            let bus: DBusConnection
            do {
                bus = try DBusConnection.system(logger: logger)
            } catch {
                printError("error: cannot connect to the D-Bus system bus: \(error)")
                throw ExitCode(1)
            }
            let bluez = BlueZClient(connection: bus, logger: logger)
            await bluez.start()
            guard bluez.isAvailable else {
                printError("error: BlueZ (org.bluez) is not on the D-Bus system bus")
                throw ExitCode(1)
            }
            guard bluez.tree.properties(path: adapterPath, interface: BlueZ.adapter) != nil else {
                printError("error: adapter \(adapterPath) not found; have: \(bluez.tree.paths(with: BlueZ.adapter).joined(separator: ", "))")
                throw ExitCode(1)
            }
            do {
                try await bluez.setDiscoveryFilter(adapter: adapterPath, uuids: uuids)
                try await bluez.startDiscovery(adapter: adapterPath)
            } catch {
                printError("error: cannot start discovery: \(error)")
                throw ExitCode(1)
            }
            var header = "ADDRESS            TYPE    RSSI  NAME                  SERVICES\n"
            header.withUTF8 { buf in _ = write(1, buf.baseAddress, buf.count) }
            var seen = Set<String>()
            func report(_ path: String) {
                guard !seen.contains(path), let d = bluez.tree.device(path), path.hasPrefix(adapterPath + "/") else { return }
                if !uuids.isEmpty && !d.uuids.contains(where: uuids.contains) { return }
                seen.insert(path)
                let services = d.uuids.compactMap { BluetoothUUID($0)?.shortForm }.joined(separator: ",")
                let rssi = d.rssi.map { String($0) } ?? "-"
                var line = "\(d.address)  \(d.addressType.padding(6))  \(rssi.padding(4))  \((d.name ?? d.alias ?? "").padding(20))  \(services)\n"
                line.withUTF8 { buf in _ = write(1, buf.baseAddress, buf.count) }
            }
            for d in bluez.tree.devices(adapter: adapterPath) { report(d.path) }
            let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
            let timer = Task {
                try? await Task.sleep(until: deadline)
                bluez.stop()
            }
            for await e in bluez.events {
                switch e {
                case .interfacesAdded(let path, let ifaces) where ifaces.contains(BlueZ.device):
                    report(path)
                case .propertiesChanged(let path, BlueZ.device, let changed) where changed.contains("UUIDs"):
                    report(path)
                default:
                    break
                }
            }
            timer.cancel()
            try? await bluez.stopDiscovery(adapter: adapterPath)
            bus.close()
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
