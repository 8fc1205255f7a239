import BridgeBase
import Logging
import Synchronization

/// Exports objects on a ``DBusConnection``.
///
/// Handles method dispatch and the standard interfaces: `org.freedesktop.DBus.Properties`
/// (Get, GetAll, Set and `PropertiesChanged`), `org.freedesktop.DBus.ObjectManager`
/// (GetManagedObjects, `InterfacesAdded`, `InterfacesRemoved`), `org.freedesktop.DBus.Introspectable`
/// (generated XML with child nodes) and `org.freedesktop.DBus.Peer`. Thread-safe.
public final class DBusObjectServer: Sendable {
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
    static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    static let peerInterface = "org.freedesktop.DBus.Peer"

    struct ExportedInterface {
        var export: DBusInterfaceExport
        var properties: [String: DBusValue]
    }
    struct Object {
        var order: [String] = []
        var interfaces: [String: ExportedInterface] = [:]
    }
    struct State {
        var objects: [String: Object] = [:]
        var managers: Set<String> = []
    }

    /// The connection the objects are exported on (also for calls back to clients).
    public let connection: DBusConnection
    let logger: Logger
    let state = Mutex(State())

    /// Creates a server and makes it the connection's handler for incoming method calls.
    public init(connection: DBusConnection, logger: Logger) {
        self.connection = connection
        self.logger = logger
        connection.setMethodCallHandler { [weak self] call in
            guard let self else {
                call.replyError(DBusError(DBusError.Name.unknownObject, "no objects are exported"))
                return
            }
            self.handle(call)
        }
    }

    // MARK: Object tree

    /// Makes `path` an ObjectManager: GetManagedObjects there returns every object below it, and
    /// interfaces added or removed below it are announced from it.
    public func addObjectManager(path: String) {
        state.withLock { _ = $0.managers.insert(path) }
    }

    /// Exports interfaces at `path` (added to those already there) and emits `InterfacesAdded`.
    public func addInterfaces(path: String, _ interfaces: [DBusInterfaceExport]) {
        guard !interfaces.isEmpty else { return }
        let manager = state.withLock { s -> String? in
            var obj = s.objects[path] ?? Object()
            for i in interfaces {
                if obj.interfaces[i.name] == nil { obj.order.append(i.name) }
                obj.interfaces[i.name] = ExportedInterface(export: i, properties: i.properties)
            }
            s.objects[path] = obj
            return Self.manager(for: path, in: s.managers)
        }
        guard let manager else { return }
        let dict = DBusValue.dictionary(
            key: "s", value: "a{sv}",
            interfaces.map { DBusDictEntry(.string($0.name), .stringVariantDict($0.properties)) })
        connection.emitSignal(
            path: manager, interface: Self.objectManagerInterface, name: "InterfacesAdded",
            arguments: [.objectPath(path), dict])
    }

    /// Removes the named interfaces (all when `nil`) and emits `InterfacesRemoved`.
    public func removeInterfaces(path: String, names: [String]? = nil) {
        let (removed, manager) = state.withLock { s -> ([String], String?) in
            guard var obj = s.objects[path] else { return ([], nil) }
            let gone = names.map { n in obj.order.filter { n.contains($0) } } ?? obj.order
            for n in gone { obj.interfaces[n] = nil }
            obj.order.removeAll { gone.contains($0) }
            s.objects[path] = obj.order.isEmpty ? nil : obj
            return (gone, Self.manager(for: path, in: s.managers))
        }
        guard !removed.isEmpty, let manager else { return }
        connection.emitSignal(
            path: manager, interface: Self.objectManagerInterface, name: "InterfacesRemoved",
            arguments: [.objectPath(path), .stringArray(removed)])
    }

    /// Removes `path` and every object below it, deepest first.
    public func removeSubtree(path: String) {
        let paths = state.withLock { s in
            s.objects.keys.filter { $0 == path || Self.isBelow($0, path) }
        }
        for p in paths.sorted(by: { $0.count > $1.count }) {
            removeInterfaces(path: p)
        }
    }

    /// Stores new property values and emits one `PropertiesChanged` when `emit` is true.
    /// `stored` replaces some of the values kept for `Get`/`GetAll` while `changes` are signalled
    /// (a service that signals a value before queries see it).
    public func setProperties(
        path: String, interface: String, _ changes: [String: DBusValue], emit: Bool = true,
        stored: [String: DBusValue] = [:]
    ) {
        let exists = state.withLock { s -> Bool in
            guard s.objects[path]?.interfaces[interface] != nil else { return false }
            for (k, v) in changes { s.objects[path]!.interfaces[interface]!.properties[k] = stored[k] ?? v }
            return true
        }
        guard exists, emit else { return }
        connection.emitSignal(
            path: path, interface: Self.propertiesInterface, name: "PropertiesChanged",
            arguments: [.string(interface), .stringVariantDict(changes), .array("s", [])])
    }

    /// Removes property values and emits `PropertiesChanged` with them invalidated.
    public func invalidateProperties(path: String, interface: String, _ names: [String]) {
        let exists = state.withLock { s -> Bool in
            guard s.objects[path]?.interfaces[interface] != nil else { return false }
            for n in names { s.objects[path]!.interfaces[interface]!.properties[n] = nil }
            return true
        }
        guard exists else { return }
        connection.emitSignal(
            path: path, interface: Self.propertiesInterface, name: "PropertiesChanged",
            arguments: [.string(interface), .stringVariantDict([:]), .stringArray(names)])
    }

    /// The current value of a property.
    public func property(path: String, interface: String, name: String) -> DBusValue? {
        state.withLock { $0.objects[path]?.interfaces[interface]?.properties[name] }
    }

    /// Whether an object is exported at `path`.
    public func hasObject(path: String) -> Bool {
        state.withLock { $0.objects[path] != nil }
    }

    // MARK: Helpers

    static func isBelow(_ path: String, _ root: String) -> Bool {
        if root == "/" { return path != "/" }
        return path.hasPrefix(root + "/")
    }

    static func manager(for path: String, in managers: Set<String>) -> String? {
        // The nearest ObjectManager at or above the object.
        var best: String?
        for m in managers where m == path || isBelow(path, m) {
            if best == nil || m.count > best!.count { best = m }
        }
        return best
    }

    // MARK: Dispatch (I/O thread)

    func handle(_ call: DBusIncomingCall) {
        switch call.interface {
        case Self.propertiesInterface:
            handleProperties(call)
        case Self.objectManagerInterface where call.member == "GetManagedObjects":
            handleGetManagedObjects(call)
        case Self.introspectableInterface where call.member == "Introspect":
            call.reply([.string(introspect(path: call.path))])
        case Self.peerInterface:
            if call.member == "Ping" {
                call.reply([])
            } else if call.member == "GetMachineId" {
                call.reply([.string("00000000000000000000000000000000")])
            } else {
                call.replyError(Self.unknownMethod(call))
            }
        default:
            handleMethod(call)
        }
    }

    /// libdbus's own answer to a call nobody handles (what a bluetoothd without the method says).
    static func unknownMethod(_ call: DBusIncomingCall) -> DBusError {
        DBusError(
            DBusError.Name.unknownMethod,
            "Method \"\(call.member)\" with signature \"\(call.signature)\" on interface \"\(call.interface)\" doesn't exist\n")
    }

    func handleMethod(_ call: DBusIncomingCall) {
        let lookup = state.withLock { s -> Result<DBusMethod, DBusError> in
            guard let obj = s.objects[call.path] else {
                return .failure(DBusError(DBusError.Name.unknownObject, "no object at \(call.path)"))
            }
            if call.interface.isEmpty {
                for name in obj.order {
                    if let m = obj.interfaces[name]?.export.methods[call.member] { return .success(m) }
                }
                return .failure(Self.unknownMethod(call))
            }
            guard let iface = obj.interfaces[call.interface] else {
                return .failure(
                    DBusError(DBusError.Name.unknownInterface, "no interface \(call.interface) at \(call.path)"))
            }
            guard let m = iface.export.methods[call.member] else {
                return .failure(Self.unknownMethod(call))
            }
            return .success(m)
        }
        let method: DBusMethod
        switch lookup {
        case .failure(let e):
            call.replyError(e)
            return
        case .success(let m):
            method = m
        }
        guard call.signature == method.inSignature else {
            call.replyError(DBusError(
                DBusError.Name.invalidArgs,
                "\(call.member) takes (\(method.inSignature)), not (\(call.signature))"))
            return
        }
        let invocation = DBusMethodInvocation(
            sender: call.sender, path: call.path, interface: call.interface, member: call.member,
            arguments: call.arguments)
        // Unstructured: the call arrives on the D-Bus I/O thread, outside any task; the task ends
        // with the reply.
        Task {
            do {
                let values = try await method.handler(invocation)
                call.reply(values)
                method.afterReply?(values)
            } catch let e as DBusError {
                call.replyError(e)
            } catch {
                call.replyError(DBusError(DBusError.Name.failed, "\(error)"))
            }
        }
    }

    func handleProperties(_ call: DBusIncomingCall) {
        let args = call.arguments
        switch (call.member, call.signature) {
        case ("Get", "ss"):
            let iface = args[0].string ?? "", name = args[1].string ?? ""
            let r = state.withLock { s -> Result<DBusValue, DBusError> in
                guard let obj = s.objects[call.path] else {
                    return .failure(DBusError(DBusError.Name.unknownObject, "no object at \(call.path)"))
                }
                guard let i = obj.interfaces[iface] else {
                    return .failure(DBusError(DBusError.Name.unknownInterface, "no interface \(iface)"))
                }
                guard let v = i.properties[name] else {
                    return .failure(DBusError(DBusError.Name.invalidArgs, "No such property '\(name)'"))
                }
                return .success(v)
            }
            switch r {
            case .success(let v): call.reply([.variant(v)])
            case .failure(let e): call.replyError(e)
            }
        case ("GetAll", "s"):
            let iface = args[0].string ?? ""
            let r = state.withLock { s -> Result<[String: DBusValue], DBusError> in
                guard let obj = s.objects[call.path] else {
                    return .failure(DBusError(DBusError.Name.unknownObject, "no object at \(call.path)"))
                }
                guard let i = obj.interfaces[iface] else {
                    // The D-Bus spec: an interface the object lacks gives an empty dictionary... but
                    // well-behaved servers report it; BlueZ answers InvalidArgs.
                    return .failure(DBusError(DBusError.Name.invalidArgs, "No such interface '\(iface)'"))
                }
                return .success(i.properties)
            }
            switch r {
            case .success(let d): call.reply([.stringVariantDict(d)])
            case .failure(let e): call.replyError(e)
            }
        case ("Set", "ssv"):
            let iface = args[0].string ?? "", name = args[1].string ?? ""
            let value = args[2].unwrapped
            let r = state.withLock { s -> Result<DBusInterfaceExport, DBusError> in
                guard let obj = s.objects[call.path] else {
                    return .failure(DBusError(DBusError.Name.unknownObject, "no object at \(call.path)"))
                }
                guard let i = obj.interfaces[iface] else {
                    return .failure(DBusError(DBusError.Name.invalidArgs, "No such interface '\(iface)'"))
                }
                guard let current = i.properties[name] else {
                    return .failure(DBusError(DBusError.Name.invalidArgs, "No such property '\(name)'"))
                }
                guard current.signature == value.signature else {
                    return .failure(DBusError(
                        DBusError.Name.invalidArgs,
                        "property \(name) is of type \(current.signature), not \(value.signature)"))
                }
                return .success(i.export)
            }
            switch r {
            case .failure(let e):
                call.replyError(e)
            case .success(let export):
                guard let setter = export.setProperty else {
                    call.replyError(DBusError(DBusError.Name.propertyReadOnly, "Property '\(name)' is not writable"))
                    return
                }
                do {
                    try setter(call.path, name, value)
                    setProperties(path: call.path, interface: iface, [name: value])
                    call.reply([])
                } catch {
                    call.replyError(error)
                }
            }
        default:
            call.replyError(DBusError(
                DBusError.Name.unknownMethod,
                "unknown method \(Self.propertiesInterface).\(call.member)(\(call.signature))"))
        }
    }

    func handleGetManagedObjects(_ call: DBusIncomingCall) {
        let result = state.withLock { s -> DBusValue? in
            guard s.managers.contains(call.path) else { return nil }
            var entries = [DBusDictEntry]()
            for (path, obj) in s.objects.sorted(by: { $0.key < $1.key }) where Self.isBelow(path, call.path) {
                let ifaces = obj.order.compactMap { name -> DBusDictEntry? in
                    guard let i = obj.interfaces[name] else { return nil }
                    return DBusDictEntry(.string(name), .stringVariantDict(i.properties))
                }
                entries.append(DBusDictEntry(.objectPath(path), .dictionary(key: "s", value: "a{sv}", ifaces)))
            }
            return .dictionary(key: "o", value: "a{sa{sv}}", entries)
        }
        if let result {
            call.reply([result])
        } else {
            call.replyError(DBusError(DBusError.Name.unknownMethod, "no ObjectManager at \(call.path)"))
        }
    }

}

