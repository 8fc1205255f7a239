import ArgumentParser
import BluezSimKit
import BridgeBase
import DBusKit
import Dispatch
import Logging

#if canImport(Glibc)
import Glibc
#endif

/// `bluez-sim`: a simulated bluetoothd serving BlueZ's `org.bluez` D-Bus API from a scenario file.
struct BluezSimCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bluez-sim",
        abstract: "Simulate BlueZ (org.bluez on D-Bus) with the peripherals of a scenario file.",
        discussion: """
            Prints 'bluez-sim ready' on stdout once org.bluez (and the control name org.bluezsim) is owned. \
            SIGINT/SIGTERM end it (exit 0). Run-time faults: org.bluezsim.Control1 at /org/bluezsim (scripts/sim/simctl).
            """)

    @Option(help: "Scenario YAML file (format: see scripts/sim/demo.yaml).")
    var scenario: String

    @Option(help: "D-Bus address to connect to (default: DBUS_SYSTEM_BUS_ADDRESS or the system bus).")
    var bus: String?

    @Option(name: .customLong("write-log"), help: "One line per write the peripheral accepted: <unix_ns> <address> <uuid> <type> <offset> <hex>.")
    var writeLog: String?

    @Option(name: .customLong("notify-log"), help: "Append one line per notification: <unix_ns> <address> <uuid> <hex>.")
    var notifyLog: String?

    @Flag(name: .customLong("log-broadcasts"),
          help: "Also log each broadcast frame (scenario 'broadcast') to --notify-log when signalled: <unix_ns> <address> <service data uuid> <hex>.")
    var logBroadcasts = false

    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: String = "info"

    @Flag(name: .customLong("no-gatt-cache"), help: "Remove GATT objects on disconnect (BlueZ with Cache=no).")
    var noGattCache = false

    @Flag(name: .customLong("no-generic-attribute-service"), help: "Do not export the 0x1801 service.")
    var noGenericAttributeService = false

    @Option(name: .customLong("state-dir"), help: "Remember known/paired devices here across restarts (like /var/lib/bluetooth).")
    var stateDir: String?

    @Option(name: .customLong("link-dir"),
            help: "A directory shared with other bluez-sim processes: a peripheral takes one link at a time across all of them (one flock'ed file per peripheral; default: $BLUEZ_SIM_LINK_DIR).")
    var linkDir: String?

    @Flag(name: .customLong("append-logs"), help: "Append to --write-log/--notify-log instead of truncating them (restarts).")
    var appendLogs = false

    @Flag(name: .customLong("no-control"), help: "Do not offer the control interface (org.bluezsim).")
    var noControl = false

    @Flag(name: .customLong("experimental"),
          help: "Offer what bluetoothd -E offers: Adapter1.ConnectDevice and AdvertisementMonitorManager1 (passive scanning); without it neither exists.")
    var experimental = false

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level \(logLevel)")
        }
    }

    func run() async throws {
        // Handle SIGINT/SIGTERM from the start, so a stop during startup also exits cleanly.
        let termination = TerminationSignals()
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "bluez-sim")
        let scenario: Scenario
        let notify: EventLog?
        let writes: EventLog?
        let store: KnownDeviceStore?
        do {
            scenario = try ScenarioLoader.load(path: self.scenario)
            notify = try notifyLog.map { path throws(ScenarioError) in
                try EventLog(path: path, flushEachLine: false, append: appendLogs)
            }
            writes = try writeLog.map { path throws(ScenarioError) in
                try EventLog(path: path, flushEachLine: true, append: appendLogs)
            }
            store = try stateDir.map { dir throws(ScenarioError) in try KnownDeviceStore(directory: dir) }
        } catch {
            FileHandleStderr.write("bluez-sim: \(error.description)\n")
            throw ExitCode(1)
        }

        let connection: DBusConnection
        // The control interface has a connection of its own, so it stays out of org.bluez's object tree.
        let controlConnection: DBusConnection?
        do {
            connection = try connect(logger: logger)
            controlConnection = noControl ? nil : try connect(logger: logger)
        } catch {
            logger.critical("cannot connect to D-Bus: \(error)")
            throw ExitCode(2)
        }
        var options = SimulatorOptions()
        options.gattCache = !noGattCache
        options.genericAttributeService = !noGenericAttributeService
        options.stateStore = store
        options.connectDevice = experimental
        options.logBroadcasts = logBroadcasts
        if let dir = linkDir ?? getenv("BLUEZ_SIM_LINK_DIR").map({ String(cString: $0) }), !dir.isEmpty {
            // Created when missing (its parent must exist); several simulators may race to create it.
            if mkdir(dir, 0o755) != 0 && errno != EEXIST {
                logger.critical("cannot create the link directory \(dir): errno \(errno)")
                throw ExitCode(1)
            }
            options.linkDirectory = dir
        }
        let server = DBusObjectServer(connection: connection, logger: logger)
        let simulator = Simulator(scenario: scenario, server: server, logger: logger, options: options,
                                  notifyLog: notify, writeLog: writes)
        await simulator.start()
        let watcher = simulator.watchBusClients(connection)
        var controlServer: DBusObjectServer?
        if let controlConnection {
            let server = DBusObjectServer(connection: controlConnection, logger: logger)
            server.addInterfaces(path: SimulatorControl.path, [SimulatorControl.interface(for: simulator)])
            controlServer = server
            do {
                try await controlConnection.requestName(SimulatorControl.busName)
            } catch {
                logger.critical("cannot own \(SimulatorControl.busName): \(error)")
                throw ExitCode(2)
            }
        }
        do {
            try await connection.requestName(BlueZNames.service)
        } catch {
            logger.critical("cannot own \(BlueZNames.service): \(error)")
            throw ExitCode(2)
        }
        print("bluez-sim ready")
        fflush(nil)

        let received = await termination.next()
        logger.info("terminating on signal \(received)")
        watcher.cancel()
        // Like bluetoothd on SIGTERM: Powered false first, then InterfacesRemoved for every object.
        await simulator.shutdown()
        await simulator.stop()
        connection.close()
        controlConnection?.close()
        _ = controlServer
    }

    func connect(logger: Logger) throws(DBusError) -> DBusConnection {
        if let bus { return try DBusConnection.connect(address: bus, logger: logger) }
        return try DBusConnection.system(logger: logger)
    }
}

/// SIGINT and SIGTERM, delivered through Dispatch instead of killing the process.
final class TerminationSignals {
    private let stream: AsyncStream<Int32>
    private let sources: [any DispatchSourceSignal]

    init() {
        let (stream, continuation) = AsyncStream<Int32>.makeStream()
        self.stream = stream
        sources = [SIGINT, SIGTERM].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { continuation.yield(sig) }
            source.resume()
            return source
        }
    }

    /// Waits for the first signal.
    func next() async -> Int32 {
        for await sig in stream { return sig }
        return SIGTERM
    }
}

/// Unbuffered writes to standard error.
enum FileHandleStderr {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}

// `AsyncParsableCommand.main()` cannot be picked from top-level code in main.swift; this is its body.
do {
    let command = try BluezSimCommand.parse()
    try await command.run()
} catch {
    BluezSimCommand.exit(withError: error)
}
