import BlueZ
import Bridge
import BridgeCore
import ConfigLoader
import DBusKit
import Logging
import ServiceLifecycle
import UnixSignals

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
        exit(await BridgeCommand.main(Array(CommandLine.arguments.dropFirst())))
    }
}

/// The `ble-mqtt-bridge` commands (SPEC §2); the command line is described by ``BridgeCommandLine``.
enum BridgeCommand {
    /// Parses the arguments, runs the command, returns the exit status (64 for a usage error).
    static func main(_ arguments: [String]) async -> Int32 {
        let action: CommandLineAction
        do throws(CommandLineError) {
            action = try BridgeCommandLine.parser.parse(arguments)
        } catch {
            printError(error.description, newline: false)
            return CommandLineError.exitStatus
        }
        switch action {
        case .help(let text), .version(let text):
            printOutput(text)
            return 0
        case .run(let command):
            do {
                switch command.commandPath {
                case ["run"]: try await Run(command).run()
                case ["check-config"]: try CheckConfig(command).run()
                case ["scan"]: try await Scan(command).run()
                case ["web"]: try WebPage(command).run()
                default: preconditionFailure("no action for \(command.commandPath)")
                }
                return 0
            } catch let exit as ExitStatus {
                return exit.status
            } catch {
                printError("Error: \(error)")
                return 1
            }
        }
    }
}

/// Ends a command with this exit status (its message already printed).
struct ExitStatus: Error {
    var status: Int32
    init(_ status: Int32) { self.status = status }
}

/// The `--log-level` option.
struct LogOptions {
    var logLevel: Logger.Level?

    init(_ command: ParsedCommandLine) {
        logLevel = command.value("log-level").flatMap { Logger.Level(rawValue: $0) }
    }

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

/// Loads the configuration for `run` and `check-config`: a setting this version cannot act on yet
/// (`cluster.enabled: true`, ``BridgeConfig/checkSupported()``) is refused like an invalid one.
func loadConfig(_ path: String) throws -> BridgeConfig {
    do {
        let config = try BridgeConfig.load(path: path)
        for w in config.warnings { printError("warning: \(w)") }
        try config.checkSupported()
        return config
    } catch {
        // Every error the loader found, each as file:line:column: message.
        for e in error.all { printError("\(e)") }
        throw ExitStatus(2)
    }
}

func printError(_ text: String, newline: Bool = true) {
    writeAll(2, newline ? text + "\n" : text)
}

func printOutput(_ text: String) {
    writeAll(1, text)
}

extension BridgeCommand {
    /// `ble-mqtt-bridge run`.
    struct Run {
        var config: String
        var log: LogOptions

        init(_ command: ParsedCommandLine) {
            config = command.value("config") ?? "bridge.yaml"
            log = LogOptions(command)
        }

        func run() async throws {
            let cfg = try loadConfig(config)
            let logger = log.bootstrap(configLevel: cfg.logLevel)
            logger.info("ble-mqtt-bridge \(BridgeCommandLine.version) starting with \(config)")
            let service = BridgeService(config: cfg, logger: logger)
            var configuration = ServiceGroupConfiguration(
                services: [.init(service: service, successTerminationBehavior: .gracefullyShutdownGroup)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger)
            // Shutdown is bounded whatever BlueZ, the bus or the broker do meanwhile: after
            // 8 s the group is cancelled (every D-Bus call with it); after 12 s the process exits.
            configuration.maximumGracefulShutdownDuration = .seconds(8)
            let group = ServiceGroup(configuration: configuration)
            try await withThrowingDiscardingTaskGroup { tasks in
                // A second SIGTERM/SIGINT exits at once (the broker then publishes the last will).
                tasks.addTask {
                    var seen = 0
                    for await _ in await UnixSignalsSequence(trapping: .sigterm, .sigint) {
                        seen += 1
                        if seen >= 2 {
                            logger.warning("second signal: exiting at once")
                            _exit(1)
                        }
                        // Unstructured on purpose: a last resort that must outlive this task
                        // group if shutdown wedges.
                        Task.detached {
                            try? await Task.sleep(for: .seconds(12))
                            logger.error("shutdown did not finish within 12 s: exiting")
                            _exit(1)
                        }
                    }
                }
                try await group.run()
                tasks.cancelAll()
            }
        }
    }

    /// `ble-mqtt-bridge check-config`.
    struct CheckConfig {
        var config: String

        init(_ command: ParsedCommandLine) {
            config = command.value("config") ?? "bridge.yaml"
        }

        func run() throws {
            let cfg = try loadConfig(config)
            let trackers = cfg.trackers.isEmpty ? "" : ", \(cfg.trackers.count) trackers (\(cfg.trackers.map(\.name).joined(separator: ", ")))"
            printOutput(
                "\(config): ok (\(cfg.bluetooth.services.count) services, \(cfg.devices.count) devices\(trackers), broker \(cfg.mqtt.url))\n")
            // Every profile of profiles_dir was loaded and checked, used or not.
            printOutput(ProfileCatalog.summary(of: cfg) + "\n")
        }
    }

    /// `ble-mqtt-bridge scan`.
    struct Scan {
        var seconds: Double
        var service: [String]
        var adapter: String
        var irks: [String]
        var log: LogOptions

        init(_ command: ParsedCommandLine) {
            seconds = command.number("seconds") ?? 10
            service = command.allValues("service")
            adapter = command.value("adapter") ?? "hci0"
            irks = command.allValues("irk")
            log = LogOptions(command)
        }

        func run() async throws {
            let logger = log.bootstrap()
            var uuids: [String] = []
            for s in service {
                guard let u = BluetoothUUID(s) else {
                    printError("error: '\(s)' is not a Bluetooth UUID")
                    throw ExitStatus(2)
                }
                uuids.append(u.uuidString)
            }
            var keys: [IdentityResolvingKey] = []
            for text in irks {
                guard let key = IdentityResolvingKey(hex: text) else {
                    printError("error: --irk takes 32 hex digits (16 bytes, most significant first)")
                    throw ExitStatus(2)
                }
                keys.append(key)
            }
            let adapterPath = adapter.hasPrefix("/") ? adapter : "/org/bluez/\(adapter)"
            let bus: DBusConnection
            do {
                bus = try DBusConnection.system(logger: logger)
            } catch {
                printError("error: cannot connect to the D-Bus system bus: \(error)")
                throw ExitStatus(1)
            }
            let bluez = BlueZClient(connection: bus, logger: logger)
            await bluez.start()
            guard bluez.isAvailable else {
                printError("error: BlueZ (org.bluez) is not on the D-Bus system bus")
                throw ExitStatus(1)
            }
            guard bluez.tree.properties(path: adapterPath, interface: BlueZ.adapter) != nil else {
                printError("error: adapter \(adapterPath) not found; have: \(bluez.tree.paths(with: BlueZ.adapter).joined(separator: ", "))")
                throw ExitStatus(1)
            }
            do {
                // Duplicate data on: broadcast sensors' readings arrive as they change.
                try await bluez.setDiscoveryFilter(adapter: adapterPath, uuids: uuids, duplicateData: true)
                try await bluez.startDiscovery(adapter: adapterPath)
            } catch {
                printError("error: cannot start discovery: \(error)")
                throw ExitStatus(1)
            }
            var header = "ADDRESS            TYPE    RSSI  NAME                  SERVICES\n"
            header.withUTF8 { buf in _ = write(1, buf.baseAddress, buf.count) }
            var seen = Set<String>()
            var decoded = Set<String>()
            func report(_ path: String) {
                guard let d = bluez.tree.device(path), path.hasPrefix(adapterPath + "/") else { return }
                if !uuids.isEmpty && !d.uuids.contains(where: { uuids.contains($0.uuidString) }) { return }
                // Each advertiser once, and once more when its broadcast readings first decode
                // (how a user finds which device a bindkey belongs to).
                let parts = [Self.decodedSummary(d), Self.trackerSummary(d, keys: keys), Self.profileSummary(d)].compactMap { $0 }
                let summary = parts.isEmpty ? nil : parts.joined(separator: "  ")
                if seen.contains(path) && (summary == nil || decoded.contains(path)) { return }
                seen.insert(path)
                if summary != nil { decoded.insert(path) }
                let services = d.uuids.map(\.shortForm).joined(separator: ",")
                let rssi = d.rssi.map { String($0) } ?? "-"
                var line = "\(d.address)  \(d.addressType.rawValue.padding(6))  \(rssi.padding(4))  \((d.localName ?? "").padding(20))  \(services)"
                if let summary { line += "  " + summary }
                line += "\n"
                line.withUTF8 { buf in _ = write(1, buf.baseAddress, buf.count) }
            }
            for d in bluez.tree.devices(adapter: adapterPath) { report(d.path) }
            let deadline = ContinuousClock.now + .milliseconds(Int(min(seconds, 1e9) * 1000))
            await withDiscardingTaskGroup { group in
                // The scan ends at the deadline: the events end when the client stops.
                group.addTask {
                    try? await Task.sleep(until: deadline)
                    bluez.stop()
                }
                for await e in bluez.events {
                    switch e {
                    case .interfacesAdded(let path, let ifaces) where ifaces.contains(BlueZ.device):
                        report(path)
                    case .propertiesChanged(let path, BlueZ.device, let changed)
                    where changed.contains("UUIDs") || changed.contains("ServiceData") || changed.contains("ManufacturerData")
                        || changed.contains("Name"):
                        report(path)
                    default:
                        break
                    }
                }
                group.cancelAll()
            }
            try? await bluez.stopDiscovery(adapter: adapterPath)
            bus.close()
        }

        /// The shipped profiles (SPEC §15) whose `recognize` fits the device: `profile switchbot_bot,switchbot_curtain`
        /// (the value for a device entry's `profile:`), or nil.
        static func profileSummary(_ d: BlueZDevice) -> String? {
            let ids = shippedProfiles.filter {
                !$0.recognize.isEmpty
                    && $0.recognize.matches(name: d.localName, serviceData: Array(d.serviceData.keys), services: d.uuids)
            }.map(\.id)
            return ids.isEmpty ? nil : "profile " + ids.joined(separator: ",")
        }

        /// The shipped profiles, in id order (they are compiled in and checked by the tests: none fails to load).
        static let shippedProfiles: [DeviceProfile] =
            ((try? ProfileCatalog.shipped().profiles) ?? [:]).values.sorted { $0.id < $1.id }

        /// What a tracker (SPEC §12) would match: `ibeacon uuid:major:minor`, and `irk N` when the address is a
        /// resolvable private address of the N-th `--irk` (counted from 1). A key given in the other byte order (as
        /// BlueZ stores it in `/var/lib/bluetooth`: least significant byte first) is recognised too, and the line says
        /// which hex to configure.
        static func trackerSummary(_ d: BlueZDevice, keys: [IdentityResolvingKey]) -> String? {
            var parts: [String] = []
            if let beacon = IBeacon(manufacturerData: d.manufacturerData) { parts.append("ibeacon \(beacon.identity)") }
            if d.addressType == .random {
                for (index, key) in keys.enumerated() {
                    if key.resolves(d.address) {
                        parts.append("irk \(index + 1)")
                        break
                    }
                    if let reversed = IdentityResolvingKey(bytes: key.bytes.reversed()), reversed.resolves(d.address) {
                        parts.append("irk \(index + 1) in the other byte order: configure irk \"\(Hex.encode(reversed.bytes))\"")
                        break
                    }
                }
            }
            return parts.isEmpty ? nil : parts.joined(separator: "  ")
        }

        /// `bthome_v2 #17 temperature=21.5 humidity=45.12`, `govee H5075 temperature=21.5 humidity=45`,
        /// `xiaomi encrypted (needs a bindkey)` (``AdvertisementClaim/summary``), or nil when no decoder
        /// understands the device's advertisement. The device's name and advertised UUIDs go with its data:
        /// some families are told by them.
        static func decodedSummary(_ d: BlueZDevice) -> String? {
            guard !(d.serviceData.isEmpty && d.manufacturerData.isEmpty) else { return nil }
            let frame = AdvertisementFrame(
                address: d.address, serviceData: d.serviceData, manufacturerData: d.manufacturerData, name: d.localName,
                serviceUUIDs: d.uuids)
            return AdvertisementDecoder.claimAnyEntry(frame, bindkey: nil)?.summary
        }
    }
}

extension String {
    fileprivate func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
