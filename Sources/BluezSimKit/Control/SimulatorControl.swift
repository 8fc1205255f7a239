import DBusKit

/// The run-time control interface of the simulator, `org.bluezsim.Control1` at `/org/bluezsim`,
/// exported on its own connection under the well-known name `org.bluezsim` so that it never shows
/// up in BlueZ's object tree. Tests drive faults through it while the simulator runs
/// (`scripts/sim/simctl`; every method is documented in scripts/sim/README.md).
public enum SimulatorControl {
    /// The well-known bus name.
    public static let busName = "org.bluezsim"
    /// The object path.
    public static let path = "/org/bluezsim"
    /// The interface name.
    public static let interface = "org.bluezsim.Control1"

    /// Error names of the control interface itself (bad arguments, unknown objects).
    public enum ErrorName {
        /// An argument is malformed (unknown mode, operation, error name, ...).
        public static let invalidArguments = "org.bluezsim.Error.InvalidArguments"
        /// No peripheral with that address in the scenario.
        public static let unknownDevice = "org.bluezsim.Error.UnknownDevice"
        /// No adapter with that name in the scenario.
        public static let unknownAdapter = "org.bluezsim.Error.UnknownAdapter"
        /// The peripheral has no characteristic with that UUID.
        public static let unknownCharacteristic = "org.bluezsim.Error.UnknownCharacteristic"
    }

    /// The interface, calling into `simulator`.
    public static func interface(for simulator: Simulator) -> DBusInterfaceExport {
        let methods: [String: DBusMethod] = [
            "SetInRange": DBusMethod(in: "sb") { inv in
                try await simulator.setInRange(address: inv.arguments[0].string ?? "", inv.arguments[1].bool ?? true)
                return []
            },
            "SetInRangeAt": DBusMethod(in: "ssb") { inv in
                try await simulator.setInRange(address: inv.arguments[0].string ?? "", adapter: try adapterName(inv.arguments[1]),
                                               inv.arguments[2].bool ?? true)
                return []
            },
            "DropConnection": DBusMethod(in: "s") { inv in
                try await simulator.dropConnection(address: inv.arguments[0].string ?? "")
                return []
            },
            "DropAllConnections": DBusMethod { _ in
                await simulator.dropAllConnections()
                return []
            },
            "SetRSSI": DBusMethod(in: "ssn") { inv in
                guard let rssi = inv.arguments[2].int else { throw invalid("expected an RSSI in dBm") }
                guard (-127...127).contains(rssi) else { throw invalid("RSSI \(rssi) is not in -127...127") }
                let adapter = inv.arguments[1].string ?? ""
                try await simulator.setRSSI(address: inv.arguments[0].string ?? "", adapter: adapter.isEmpty ? nil : adapter,
                                            Int16(rssi))
                return []
            },
            "FailNextConnect": DBusMethod(in: "sssu") { inv in
                let error = try bluezError(inv.arguments[1].string ?? "", inv.arguments[2].string ?? "")
                try await simulator.failNextConnect(address: inv.arguments[0].string ?? "", error: error,
                                                    count: UInt32(inv.arguments[3].int ?? 0))
                return []
            },
            "FailNextConnectWith": DBusMethod(in: "sssua{sv}") { inv in
                let error = try bluezError(inv.arguments[1].string ?? "", inv.arguments[2].string ?? "")
                let options = inv.arguments[4].stringDict ?? [:]
                var linkUp: Bool?
                var delay: Duration?
                var downAfter: Duration?
                for (key, value) in options {
                    switch key {
                    case "link_up":
                        guard let b = value.bool else { throw invalid("link_up must be a boolean") }
                        linkUp = b
                    case "delay_ms", "down_after_ms":
                        guard let ms = value.int, ms >= 0 else { throw invalid("\(key) must be a number of milliseconds") }
                        if key == "delay_ms" { delay = .milliseconds(ms) } else { downAfter = .milliseconds(ms) }
                    default:
                        throw invalid("unknown option \(key) (link_up, delay_ms, down_after_ms)")
                    }
                }
                try await simulator.failNextConnect(address: inv.arguments[0].string ?? "", error: error,
                                                    count: UInt32(inv.arguments[3].int ?? 0), linkUp: linkUp,
                                                    delay: delay, downAfter: downAfter)
                return []
            },
            "SetResolveBehaviour": DBusMethod(in: "ss") { inv in
                let text = inv.arguments[1].string ?? ""
                guard let behaviour = ResolveBehaviour.parse(text) else {
                    throw invalid("unknown mode \(text) (normal, delayed:DURATION, resolved-before-gatt[:DURATION], never-resolve)")
                }
                try await simulator.setResolveBehaviour(address: inv.arguments[0].string ?? "", behaviour)
                return []
            },
            "ForgetBond": DBusMethod(in: "s") { inv in
                try await simulator.forgetBond(address: inv.arguments[0].string ?? "")
                return []
            },
            "RemoveDeviceObject": DBusMethod(in: "s") { inv in
                try await simulator.removeDeviceObject(address: inv.arguments[0].string ?? "")
                return []
            },
            "FailNextStartDiscovery": DBusMethod(in: "ss") { inv in
                let name = inv.arguments[0].string ?? ""
                await simulator.failNextStartDiscovery(
                    name.isEmpty ? nil : try bluezError(name, inv.arguments[1].string ?? ""))
                return []
            },
            "StallDiscovery": DBusMethod { _ in
                try await simulator.stallDiscovery()
                return []
            },
            "SetPowered": DBusMethod(in: "b") { inv in
                try await simulator.setPowered(inv.arguments[0].bool ?? true)
                return []
            },
            "SetAdapterPowered": DBusMethod(in: "sb") { inv in
                try await simulator.setPowered(inv.arguments[1].bool ?? true, adapter: try adapterName(inv.arguments[0]))
                return []
            },
            "RemoveAdapter": DBusMethod { _ in
                try await simulator.removeAdapter()
                return []
            },
            "AddAdapter": DBusMethod { _ in
                try await simulator.addAdapter()
                return []
            },
            "RemoveAdapterNamed": DBusMethod(in: "s") { inv in
                try await simulator.removeAdapter(named: try adapterName(inv.arguments[0]))
                return []
            },
            "AddAdapterNamed": DBusMethod(in: "s") { inv in
                try await simulator.addAdapter(named: try adapterName(inv.arguments[0]))
                return []
            },
            "SetCharacteristicError": DBusMethod(in: "sssss") { inv in
                let op = try operation(inv.arguments[2].string ?? "")
                let name = inv.arguments[3].string ?? ""
                let message = inv.arguments[4].string ?? ""
                var spec: GattErrorSpec?
                if !name.isEmpty {
                    if message.isEmpty {
                        guard let parsed = GattErrorSpec.parse(name, operation: op) else {
                            throw invalid("expected an error name such as NotPermitted or an ATT code such as 0x80, not '\(name)'")
                        }
                        spec = parsed
                    } else {
                        spec = .verbatim(try bluezError(name, message))
                    }
                }
                try await simulator.setCharacteristicError(address: inv.arguments[0].string ?? "",
                                                           uuid: inv.arguments[1].string ?? "", operation: op, error: spec)
                return []
            },
            "SetCharacteristicDelay": DBusMethod(in: "sssu") { inv in
                let op = try operation(inv.arguments[2].string ?? "")
                let ms = inv.arguments[3].int ?? 0
                try await simulator.setCharacteristicDelay(address: inv.arguments[0].string ?? "",
                                                           uuid: inv.arguments[1].string ?? "", operation: op,
                                                           delay: ms > 0 ? .milliseconds(ms) : nil)
                return []
            },
            "GetStats": DBusMethod(out: "a{sv}") { _ in
                [.stringVariantDict(await simulator.statistics())]
            },
            "ResetStats": DBusMethod { _ in
                await simulator.resetStatistics()
                return []
            },
        ]
        return DBusInterfaceExport(name: interface, methods: methods)
    }

    /// `org.bluez.Error.X` (or a short `X`) with `message`, or BlueZ's fixed message for it when empty.
    static func bluezError(_ name: String, _ message: String) throws(DBusError) -> DBusError {
        let trimmed = name.trimmingSpaces()
        guard !trimmed.isEmpty, !trimmed.hasSuffix("."), !trimmed.hasPrefix("."), !trimmed.contains(" ") else {
            throw invalid("expected an error name such as org.bluez.Error.Failed, not '\(name)'")
        }
        let full = trimmed.contains(".") ? trimmed : BluezError.prefix + trimmed
        return DBusError(full, message.isEmpty ? (BluezError.standardMessage(for: full) ?? "") : message)
    }

    static func operation(_ text: String) throws(DBusError) -> GattOperation {
        guard let op = GattOperation(rawValue: text) else { throw invalid("unknown operation \(text) (read, write, notify)") }
        return op
    }

    static func adapterName(_ value: DBusValue) throws(DBusError) -> String {
        guard let s = value.string, !s.isEmpty else { throw invalid("expected an adapter name such as hci0") }
        return s
    }

    static func invalid(_ message: String) -> DBusError {
        DBusError(ErrorName.invalidArguments, message)
    }
}
