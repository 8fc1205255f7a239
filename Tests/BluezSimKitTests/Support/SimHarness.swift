import BridgeBase
import DBusKit
import Dispatch
import Foundation
import Logging
import Synchronization
import Testing

@testable import BluezSimKit

/// A ``Simulator`` in the test process on a private bus, and a client connection that talks to it
/// with plain BlueZ calls, as the bridge does.
final class SimHarness: Sendable {
    let bus: PrivateBus
    let simulator: Simulator
    let serverConnection: DBusConnection
    let client: DBusConnection
    let clientVanishWatch: Task<Void, Never>
    /// The control interface (`org.bluezsim`) on a connection of its own, when asked for.
    let controlConnection: DBusConnection?
    let controlServer: DBusObjectServer?

    static let logger = Logger(label: "bluez-sim-test") { _ in SwiftLogNoOpLogHandler() }

    private init(bus: PrivateBus, simulator: Simulator, serverConnection: DBusConnection, client: DBusConnection,
                 clientVanishWatch: Task<Void, Never>, controlConnection: DBusConnection?, controlServer: DBusObjectServer?) {
        self.bus = bus
        self.simulator = simulator
        self.serverConnection = serverConnection
        self.client = client
        self.clientVanishWatch = clientVanishWatch
        self.controlConnection = controlConnection
        self.controlServer = controlServer
    }

    /// Runs `body` with a simulator of `scenario` owning `org.bluez` (and `org.bluezsim` with
    /// `control`, as `bluez-sim` does), writing the given logs; stops it afterwards.
    static func run(_ scenario: String, options: SimulatorOptions = SimulatorOptions(), control: Bool = false,
                    notifyLog: EventLog? = nil, writeLog: EventLog? = nil,
                    _ body: (SimHarness) async throws -> Void) async throws {
        let bus = try PrivateBus()
        let serverConnection = try DBusConnection.connect(address: bus.address, logger: logger)
        let server = DBusObjectServer(connection: serverConnection, logger: logger)
        let simulator = Simulator(scenario: try ScenarioLoader.parse(scenario), server: server, logger: logger,
                                  options: options, notifyLog: notifyLog, writeLog: writeLog)
        await simulator.start()
        let watch = simulator.watchBusClients(serverConnection)
        var controlConnection: DBusConnection?
        var controlServer: DBusObjectServer?
        if control {
            let connection = try DBusConnection.connect(address: bus.address, logger: logger)
            let server = DBusObjectServer(connection: connection, logger: logger)
            server.addInterfaces(path: SimulatorControl.path, [SimulatorControl.interface(for: simulator)])
            try await connection.requestName(SimulatorControl.busName)
            controlConnection = connection
            controlServer = server
        }
        try await serverConnection.requestName(BlueZNames.service)
        let client = try DBusConnection.connect(address: bus.address, logger: logger)
        let h = SimHarness(bus: bus, simulator: simulator, serverConnection: serverConnection, client: client,
                           clientVanishWatch: watch, controlConnection: controlConnection, controlServer: controlServer)
        do {
            try await body(h)
        } catch {
            await h.stop()
            throw error
        }
        await h.stop()
    }

    func stop() async {
        clientVanishWatch.cancel()
        await simulator.stop()
        client.close()
        controlConnection?.close()
        serverConnection.close()
    }

    /// The bound on a call to the simulator. The simulator answers from the test process's
    /// cooperative pool, which the whole unit run shares (671 tests in parallel); on a busy
    /// 2-core machine its answer waited more than 10 s behind other suites' work (a `NoReply`
    /// under `scripts/stress-tests`). A bound, not a wait: an answer that never comes still fails.
    static let callTimeout: Duration = .seconds(30)

    /// Calls a method of the control interface (`org.bluezsim.Control1`).
    @discardableResult
    func control(_ method: String, _ arguments: [DBusValue] = []) async throws(DBusError) -> [DBusValue] {
        try await client.call(destination: SimulatorControl.busName, path: SimulatorControl.path,
                              interface: SimulatorControl.interface, method: method, arguments: arguments,
                              timeout: Self.callTimeout)
    }

    /// Another client on the same bus.
    func newClient() throws -> DBusConnection {
        try DBusConnection.connect(address: bus.address, logger: Self.logger)
    }

    // MARK: - BlueZ calls

    @discardableResult
    func call(_ path: String, _ interface: String, _ method: String, _ arguments: [DBusValue] = [],
              on connection: DBusConnection? = nil) async throws(DBusError) -> [DBusValue] {
        try await (connection ?? client).call(destination: BlueZNames.service, path: path, interface: interface,
                                              method: method, arguments: arguments, timeout: Self.callTimeout)
    }

    /// `Properties.Get`.
    func property(_ path: String, _ interface: String, _ name: String) async throws(DBusError) -> DBusValue {
        let reply = try await call(path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
        return reply.first?.unwrapped ?? .structure([])
    }

    /// `Device1.Connect`, then waits until `ServicesResolved` (the scenarios export the GATT objects first).
    func connect(_ address: String) async throws {
        let path = devicePath(address)
        try await call(path, BlueZNames.device, "Connect")
        try await eventually("services of \(address) resolved") {
            (try? await property(path, BlueZNames.device, "ServicesResolved")) == .bool(true)
        }
    }

    func devicePath(_ address: String, adapter: String = "hci0") -> String {
        BlueZNames.devicePath(adapter: BlueZNames.adapterPath(adapter), address: address)
    }

    /// The object path of the characteristic with the `uuid` (16-bit or full) of `address`.
    func characteristicPath(_ address: String, _ uuid: String) async throws -> String {
        let reply = try await client.call(destination: BlueZNames.service, path: "/",
                                          interface: "org.freedesktop.DBus.ObjectManager", method: "GetManagedObjects")
        guard case .dictionary(_, _, let objects)? = reply.first else { throw TestFailure("no managed objects") }
        let full = uuid.count == 36 ? uuid : "0000\(uuid)-0000-1000-8000-00805f9b34fb"
        for entry in objects {
            guard let path = entry.key.string, path.hasPrefix(devicePath(address) + "/"),
                  case .dictionary(_, _, let interfaces) = entry.value else { continue }
            for i in interfaces where i.key.string == BlueZNames.gattCharacteristic {
                if i.value.stringDict?["UUID"]?.unwrapped == .string(full) { return path }
            }
        }
        throw TestFailure("\(address) has no characteristic \(uuid)")
    }

    /// `AcquireNotify({})`: the client's socket and the MTU.
    func acquireNotify(_ path: String, on connection: DBusConnection? = nil) async throws(DBusError) -> (Int32, UInt16) {
        let reply = try await call(path, BlueZNames.gattCharacteristic, "AcquireNotify",
                                   [.stringVariantDict([:])], on: connection)
        guard reply.count == 2, case .unixFD(let fd) = reply[0], case .uint16(let mtu) = reply[1] else {
            throw DBusError("test.BadReply", "AcquireNotify replied \(reply)")
        }
        return (fd, mtu)
    }

    /// The simulator's per-device counters (`GetStats` → `devices` → `address`).
    func stats(_ address: String) async -> [String: DBusValue] {
        let all = await simulator.statistics()
        guard case .dictionary(_, _, let devices)? = all["devices"] else { return [:] }
        let entry = devices.first { $0.key.string == address }
        return entry?.value.stringDict?.mapValues(\.unwrapped) ?? [:]
    }

    func counter(_ address: String, _ name: String) async -> Int {
        (await stats(address))[name]?.int ?? -1
    }

    /// `WriteValue` of `hex`, with the `type` option when given (else bluetoothd picks the procedure).
    func write(_ path: String, _ hex: String, type: String? = nil) async throws {
        let options: [String: DBusValue] = type.map { ["type": .string($0)] } ?? [:]
        try await call(path, BlueZNames.gattCharacteristic, "WriteValue",
                       [.bytes(try Hex.decode(hex)), .stringVariantDict(options)])
    }

    /// `ReadValue` as hex.
    func read(_ path: String) async throws -> String {
        let reply = try await call(path, BlueZNames.gattCharacteristic, "ReadValue", [.stringVariantDict([:])])
        guard let bytes = reply.first?.bytes else { throw TestFailure("ReadValue replied \(reply)") }
        return Hex.encode(bytes)
    }

    /// `StartNotify` on `path`, with a recorder of its `PropertiesChanged` started before it.
    func subscribe(_ path: String) async throws -> PropertyRecorder {
        let recorder = PropertyRecorder(client, path: path)
        try await call(path, BlueZNames.gattCharacteristic, "StartNotify")
        return recorder
    }

    /// `Disconnect`, then ``connect(_:)`` again: a new link.
    func reconnect(_ address: String) async throws {
        let path = devicePath(address)
        try await call(path, BlueZNames.device, "Disconnect")
        try await eventually("\(address) disconnected") {
            (try? await property(path, BlueZNames.device, "Connected")) == .bool(false)
        }
        try await connect(address)
    }
}

/// A failure described by text.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Waits until `condition` holds, checking every few milliseconds, for at most `timeout`.
func eventually(_ what: String, timeout: Duration = .seconds(10),
                _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while true {
        if try await condition() { return }
        guard ContinuousClock.now < deadline else { throw TestFailure("timed out after \(timeout): \(what)") }
        try await Task.sleep(for: .milliseconds(5))
    }
}

/// Records the `PropertiesChanged` signals of one object.
final class PropertyRecorder: Sendable {
    private final class Changes: Sendable {
        let list = Mutex<[[String: DBusValue]]>([])
    }

    private let changes = Changes()
    private let subscription: DBusConnection.SignalSubscription

    init(_ connection: DBusConnection, path: String) {
        let changes = self.changes
        subscription = connection.addSignalHandler(DBusMatchRule(
            sender: nil, path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged")) { signal in
            let dict = signal.arguments.count > 1 ? (signal.arguments[1].stringDict ?? [:]) : [:]
            changes.list.withLock { $0.append(dict.mapValues(\.unwrapped)) }
        }
    }

    deinit { subscription.cancel() }

    /// The values `name` was signalled with, in order.
    func values(_ name: String) -> [DBusValue] {
        changes.list.withLock { $0.compactMap { $0[name] } }
    }

    /// Every signal's changed properties, in order.
    func all() -> [[String: DBusValue]] {
        changes.list.withLock { $0 }
    }

    /// Waits until `name` was signalled with `value` (at least `count` times).
    func wait(for name: String, _ value: DBusValue, count: Int = 1) async throws {
        try await eventually("PropertiesChanged \(name) = \(value)") {
            values(name).filter { $0 == value }.count >= count
        }
    }
}
