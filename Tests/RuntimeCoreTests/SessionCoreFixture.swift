import BridgeCore
import ConfigLoader
import Testing

@testable import RuntimeCore

/// A ``SessionCore`` under test: inputs with explicit times in, the actions out as short lines
/// (log lines left out). No task, no clock, no fake.
struct SessionCoreFixture {
    static let address = "C8:12:34:56:78:9A"
    static let path = "/org/bluez/hci0/dev_C8_12_34_56_78_9A"
    static let yaml = """
        mqtt: { url: "mqtt://127.0.0.1:1" }
        bluetooth: { services: ["180d"] }
        commands: { timeout: 10s, queue: 4 }
        devices:
          - match: { address: "C8:12:34:56:78:9A" }
            name: strap
        """

    var core: SessionCore
    let topics: TopicMapper
    /// The wall time every input is handed with (profile templates render it).
    var wall = WallTime(unix: 0)

    init(
        policy: ConnectionPolicy = .always, connectNow: Bool = false, yaml: String = Self.yaml, profile: DeviceProfileBinding? = nil
    ) throws {
        let config = try BridgeConfig.parse(yaml: yaml, fileName: "test.yaml", environment: [:], hostName: "test")
        topics = TopicMapper(config: config)
        let address = try #require(BluetoothAddress(Self.address))
        var deviceConfig = config.device(address: address, name: "Strap")
        if let profile { deviceConfig?.profile = profile }
        let device = SessionDevice(
            path: Self.path, address: address, addressType: "public",
            segment: topics.deviceSegment(address: address, config: deviceConfig), config: deviceConfig, unreadable: [],
            connectNow: connectNow, seed: 1, policy: policy)
        core = SessionCore(configuration: SessionCore.Configuration(
            config: config, topics: topics, timing: SessionTiming(), device: device))
    }

    /// The seconds of `instant` after the clock's origin.
    static func seconds(_ instant: BridgeInstant) -> Double {
        let c = instant.offset.components
        return ((Double(c.seconds) + Double(c.attoseconds) / 1e18) * 1000).rounded() / 1000
    }

    /// `seconds` after the clock's origin.
    static func t(_ seconds: Double) -> BridgeInstant { BridgeInstant(offset: .milliseconds(Int64((seconds * 1000).rounded()))) }

    // MARK: The device as BlueZ shows it

    static func characteristic(_ service: String, _ uuid: String, _ flags: [String]) -> SessionCore.DeviceView.Characteristic {
        SessionCore.DeviceView.Characteristic(
            path: "\(path)/\(service)/\(uuid)", uuid: BluetoothUUID(uuid)!, properties: CharacteristicProperties(bluezFlags: flags))
    }

    /// Heart rate (notify) and body sensor location (read) in 180d, battery (read, notify) in 180f.
    static let strapServices: [SessionCore.DeviceView.Service] = [
        SessionCore.DeviceView.Service(
            path: "\(path)/180d", uuid: BluetoothUUID("180d")!,
            characteristics: [characteristic("180d", "2a37", ["notify"]), characteristic("180d", "2a38", ["read"])]),
        SessionCore.DeviceView.Service(
            path: "\(path)/180f", uuid: BluetoothUUID("180f")!,
            characteristics: [characteristic("180f", "2a19", ["read", "notify"])]),
    ]

    /// Connected, resolved, every GATT object there.
    static let resolved = SessionCore.DeviceView(
        connected: true, servicesResolved: true, uuids: [BluetoothUUID("180d")!, BluetoothUUID("180f")!], name: "Strap",
        services: strapServices)
    /// Connected, services not resolved yet, no GATT object.
    static let connected = SessionCore.DeviceView(
        connected: true, servicesResolved: false, uuids: [BluetoothUUID("180d")!, BluetoothUUID("180f")!], name: "Strap",
        services: [])
    /// Known to BlueZ, not connected.
    static let disconnected = SessionCore.DeviceView(
        connected: false, servicesResolved: false, uuids: [BluetoothUUID("180d")!, BluetoothUUID("180f")!], name: "Strap",
        services: [])

    // MARK: Driving the core

    /// Hands `input` to the core at `seconds`; the actions as lines.
    mutating func step(_ input: SessionCore.Input, _ view: SessionCore.DeviceView?, at seconds: Double) -> [String] {
        step(input, view, now: Self.t(seconds))
    }

    mutating func step(_ input: SessionCore.Input, _ view: SessionCore.DeviceView?, now: BridgeInstant) -> [String] {
        core.handle(input, device: view, now: now, wall: wall).compactMap(Self.line)
    }

    mutating func receive(_ input: SessionInput, _ view: SessionCore.DeviceView?, at seconds: Double) -> [String] {
        step(.received(input), view, at: seconds)
    }

    mutating func receive(_ input: SessionInput, _ view: SessionCore.DeviceView?, now: BridgeInstant) -> [String] {
        step(.received(input), view, now: now)
    }

    /// The mapped characteristic with this UUID.
    func mapped(_ uuid: String) throws -> MappedCharacteristic {
        try #require(core.characteristics.values.first { $0.uuid == BluetoothUUID(uuid)! })
    }

    /// Hands `input` to the core at `seconds` and expects exactly these actions.
    mutating func expect(
        _ input: SessionCore.Input, _ view: SessionCore.DeviceView?, at seconds: Double, _ expected: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let actual = step(input, view, at: seconds)
        #expect(actual == expected, sourceLocation: sourceLocation)
    }

    mutating func expect(
        _ input: SessionInput, _ view: SessionCore.DeviceView?, at seconds: Double, _ expected: [String],
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        expect(.received(input), view, at: seconds, expected, sourceLocation: sourceLocation)
    }

    /// A successful subscription of `uuid` for `attempt` (`acquired`: through AcquireNotify).
    func subscribed(_ uuid: String, attempt: Int, acquired: Bool = false) throws -> SessionInput {
        .operationFinished(attempt: attempt, .subscribed(try mapped(uuid), error: nil, acquired: acquired))
    }

    /// A successful setup `ReadValue` of `uuid` for `attempt`.
    func read(_ uuid: String, attempt: Int, _ value: [UInt8], initial: Bool = true) throws -> SessionInput {
        .operationFinished(attempt: attempt, .read(try mapped(uuid), initial: initial, .success(value), linkDropped: false))
    }

    /// A `/get` of the battery level, answered by `deadline`.
    static func get(_ transaction: String, deadline: Double) -> PendingCommand {
        PendingCommand(
            payload: Array(#"{"transaction": "\#(transaction)"}"#.utf8), replyTo: nil,
            device: "strap", service: "180f", characteristic: "2a19", operation: .get,
            resultTopic: "ble/strap/180f/2a19/result", deadline: t(deadline))
    }

    /// Drives a fresh `always` core to resolved services: slot, connect (attempt 1) at 1 s,
    /// `ServicesResolved` with every GATT object at 2 s; the setup's first subscription is in flight.
    mutating func driveToResolved() {
        _ = step(.start, Self.disconnected, at: 0)
        _ = receive(.slotGranted, Self.disconnected, at: 0)
        _ = receive(.connectFinished(attempt: 1, error: nil), Self.connected, at: 1)
        _ = receive(.servicesResolved(true), Self.resolved, at: 2)
        #expect(core.queue.busy, "the setup started")
    }

    /// Drives a fresh `always` core to ready: slot, connect (attempt 1), resolve at 2 s, then the
    /// setup at 3 s: subscriptions of 2a37 and 2a19 (`acquired`: both through AcquireNotify's
    /// socket, else StartNotify took over), ReadValue 2a38 and 2a19.
    mutating func driveToReady(acquired: Bool = false) throws {
        driveToResolved()
        _ = receive(try subscribed("2a37", attempt: 1, acquired: acquired), Self.resolved, at: 3)
        _ = receive(try subscribed("2a19", attempt: 1, acquired: acquired), Self.resolved, at: 3)
        _ = receive(try read("2a38", attempt: 1, [1]), Self.resolved, at: 3)
        _ = receive(try read("2a19", attempt: 1, [90]), Self.resolved, at: 3)
        #expect(core.machine.isReady)
    }

    // MARK: Actions as lines

    static func short(_ path: String) -> String { path.split(separator: "/").suffix(2).joined(separator: "/") }

    static func line(_ action: SessionCore.Action) -> String? {
        switch action {
        case .connect(let attempt, _): return "connect #\(attempt)"
        case .disconnect(let attempt): return "disconnect #\(attempt)"
        case .subscribe(let mc, let acquire, let attempt):
            return "\(acquire ? "AcquireNotify" : "StartNotify") \(short(mc.path)) #\(attempt)"
        case .read(let mc, let initial, let attempt):
            return "\(initial ? "ReadValue" : "poll ReadValue") \(short(mc.path)) #\(attempt)"
        case .readDescriptor(let mc, let kind, _, let attempt):
            return "ReadDescriptor \(short(mc.path)) \(kind.uuid.shortForm) #\(attempt)"
        case .present(let path, let cpf):
            return "present \(short(path)) \(cpf.format) \(cpf.exponent) \(String(cpf.unit, radix: 16))"
        case .command(let job, let attempt):
            return "\(job.command.operation == .set ? "write" : "read") command \(short(job.path)) #\(attempt)"
        case .releaseNotify(let path): return "releaseNotify \(short(path))"
        case .shutDown(let stop, let disconnect):
            return "shutDown stopNotify \(stop.map(short)) disconnect \(disconnect)"
        case .publishAvailability(let online): return "availability \(online ? "online" : "offline")"
        case .publishRead(let path, let value): return "publishRead \(short(path)) \(value)"
        case .route(_, let topic, _): return "route \(topic)"
        case .respond(let command, let result):
            return "respond \(command.characteristic) \(result.error.map(\.resultCode) ?? "ok")"
        case .report(let report):
            switch report {
            case .availability(let online): return "report availability \(online)"
            case .linkChanged(let connected): return "report link \(connected ? "up" : "down")"
            case .mapped(let m): return "report mapped \(m.characteristics.keys.sorted()) services \(m.serviceSegments)"
            case .unreadable(let uuid): return "report unreadable \(uuid)"
            case .connectReturned: return "report connectReturned"
            case .advertised: return "report advertised"
            case .paired: return "report paired"
            }
        case .pair(let attempt, _): return "Pair #\(attempt)"
        case .trust: return "trust"
        case .pairingRetry(let retry):
            return "pairingRetry \(retry.failures)\(retry.notBefore.map { " until \(seconds($0))" } ?? "")"
        case .requestSlot: return "requestSlot"
        case .releaseSlot: return "releaseSlot"
        case .log: return nil
        case .profileCall(let call, let attempt):
            if let bytes = call.bytes { return "write \(short(call.path)) \(Hex.encode(bytes)) \(call.type) #\(attempt)" }
            return "read \(short(call.path)) #\(attempt)"
        case .publishValues(let profile, let values):
            var json: [UInt8] = []
            JSONWriter.append(.object(values), to: &json)
            return "values \(profile) \(String(decoding: json, as: UTF8.self))"
        case .armNotify(let path, let attempt): return "arm \(short(path)) #\(attempt)"
        case .disarmNotify(let paths): return "disarm \(paths.map(short))"
        case .routeDecode(let path, _, let profile): return "routeDecode \(short(path)) \(profile)"
        }
    }
}
