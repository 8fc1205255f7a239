import TestSupport
import Logging
import Testing
@testable import DBusKit

@Suite struct DBusConnectionTests {
    let logger = Logger(label: "test")

    @Test func callsAnExportedMethodAndGetsErrors() async throws {
        let bus = try TestBus()
        let server = try DBusConnection.connect(address: bus.address, logger: logger)
        let client = try DBusConnection.connect(address: bus.address, logger: logger)
        try await server.requestName("org.example.Test")
        let objects = DBusObjectServer(connection: server, logger: logger)
        objects.addObjectManager(path: "/")
        objects.addInterfaces(path: "/org/example/obj", [
            DBusInterfaceExport(
                name: "org.example.Echo",
                properties: ["Count": .uint32(1), "Name": .string("echo")],
                methods: [
                    "Echo": DBusMethod(in: "ay", out: "ay") { inv in [inv.arguments[0]] },
                    "Fail": DBusMethod { _ in throw DBusError("org.example.Error.Nope", "nope") },
                    "Slow": DBusMethod { _ in
                        try await Task.sleep(for: .seconds(2))
                        return []
                    },
                ],
                setProperty: { _, name, _ throws(DBusError) in
                    if name != "Name" { throw DBusError(DBusError.Name.propertyReadOnly, "ro") }
                }),
        ])
        let reply = try await client.call(
            destination: "org.example.Test", path: "/org/example/obj", interface: "org.example.Echo",
            method: "Echo", arguments: [.bytes([1, 2, 3])])
        #expect(reply == [.bytes([1, 2, 3])])

        await #expect(throws: DBusError("org.example.Error.Nope", "nope")) {
            _ = try await client.call(
                destination: "org.example.Test", path: "/org/example/obj", interface: "org.example.Echo",
                method: "Fail")
        }
        // Wrong argument types.
        do {
            _ = try await client.call(
                destination: "org.example.Test", path: "/org/example/obj", interface: "org.example.Echo",
                method: "Echo", arguments: [.string("x")])
            Issue.record("expected InvalidArgs")
        } catch {
            #expect(error.name == DBusError.Name.invalidArgs)
        }
        // Timeout.
        do {
            _ = try await client.call(
                destination: "org.example.Test", path: "/org/example/obj", interface: "org.example.Echo",
                method: "Slow", timeout: .milliseconds(200))
            Issue.record("expected a timeout")
        } catch {
            #expect(error.isTimeout)
        }
        // Unknown object.
        do {
            _ = try await client.call(
                destination: "org.example.Test", path: "/nowhere", interface: "org.example.Echo", method: "Echo",
                arguments: [.bytes([])])
            Issue.record("expected UnknownObject")
        } catch {
            #expect(error.name == DBusError.Name.unknownObject)
        }
        // Properties.
        let got = try await client.call(
            destination: "org.example.Test", path: "/org/example/obj", interface: "org.freedesktop.DBus.Properties",
            method: "Get", arguments: [.string("org.example.Echo"), .string("Count")])
        #expect(got == [.variant(.uint32(1))])
        let managed = try await client.call(
            destination: "org.example.Test", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
            method: "GetManagedObjects")
        #expect(managed.first?.stringDict?["/org/example/obj"]?.stringDict?["org.example.Echo"]?
            .stringDict?["Name"]?.string == "echo")
        // Set on a read-only property is refused; on a writable one it changes and signals.
        let changes = client.signals(DBusMatchRule(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"))
        _ = try await client.call(
            destination: "org.example.Test", path: "/org/example/obj", interface: "org.freedesktop.DBus.Properties",
            method: "Set", arguments: [.string("org.example.Echo"), .string("Name"), .variant(.string("new"))])
        #expect(objects.property(path: "/org/example/obj", interface: "org.example.Echo", name: "Name") == .string("new"))
        var it = changes.makeAsyncIterator()
        let sig = await it.next()
        #expect(sig?.arguments.first == .string("org.example.Echo"))
        #expect(sig?.arguments[1].stringDict?["Name"]?.string == "new")
        let xml = try await client.call(
            destination: "org.example.Test", path: "/org", interface: "org.freedesktop.DBus.Introspectable",
            method: "Introspect")
        #expect(xml.first?.string?.contains("<node name=\"example\"/>") == true)
        server.close()
        client.close()
    }

    @Test func signalsReachMatchingSubscribersOnly() async throws {
        let bus = try TestBus()
        let a = try DBusConnection.connect(address: bus.address, logger: logger)
        let b = try DBusConnection.connect(address: bus.address, logger: logger)
        let objects = DBusObjectServer(connection: a, logger: logger)
        objects.addObjectManager(path: "/")
        let added = b.signals(DBusMatchRule(interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded"))
        let underDev = b.signals(DBusMatchRule(pathNamespace: "/org/bluez/hci0/dev_1", interface: "org.freedesktop.DBus.Properties"))
        // Let the AddMatch calls reach the bus before emitting.
        _ = try await b.nameHasOwner("org.freedesktop.DBus")
        objects.addInterfaces(path: "/org/bluez/hci0/dev_1", [DBusInterfaceExport(name: "org.bluez.Device1", properties: ["Connected": .bool(false)])])
        objects.addInterfaces(path: "/org/bluez/hci0/dev_10", [DBusInterfaceExport(name: "org.bluez.Device1", properties: ["Connected": .bool(false)])])
        objects.setProperties(path: "/org/bluez/hci0/dev_10", interface: "org.bluez.Device1", ["Connected": .bool(true)])
        objects.setProperties(path: "/org/bluez/hci0/dev_1", interface: "org.bluez.Device1", ["Connected": .bool(true)])
        var ai = added.makeAsyncIterator()
        let first = await ai.next()
        let second = await ai.next()
        #expect(first?.arguments.first == .objectPath("/org/bluez/hci0/dev_1"))
        #expect(second?.arguments.first == .objectPath("/org/bluez/hci0/dev_10"))
        var di = underDev.makeAsyncIterator()
        let change = await di.next()
        // dev_10 is not under the namespace /org/bluez/hci0/dev_1: the first change seen is dev_1's.
        #expect(change?.path == "/org/bluez/hci0/dev_1")
        a.close()
        b.close()
    }

    @Test func signalHandlersRunInOrder() async throws {
        let bus = try TestBus()
        let a = try DBusConnection.connect(address: bus.address, logger: logger)
        let b = try DBusConnection.connect(address: bus.address, logger: logger)
        let (seen, cont) = AsyncStream<Int>.makeStream()
        let sub = b.addSignalHandler(DBusMatchRule(interface: "org.example.Tick", member: "Tick")) { s in
            cont.yield(s.arguments.first?.int ?? -1)
        }
        _ = try await b.nameHasOwner("org.freedesktop.DBus")
        for i in 0..<200 {
            a.emitSignal(path: "/t", interface: "org.example.Tick", name: "Tick", arguments: [.int32(Int32(i))])
        }
        var got: [Int] = []
        for await v in seen {
            got.append(v)
            if got.count == 200 { break }
        }
        #expect(got == Array(0..<200))
        sub.cancel()
        a.close()
        b.close()
    }

    @Test func hundredConcurrentCallsAllComplete() async throws {
        let bus = try TestBus()
        let server = try DBusConnection.connect(address: bus.address, logger: logger)
        let client = try DBusConnection.connect(address: bus.address, logger: logger)
        let objects = DBusObjectServer(connection: server, logger: logger)
        objects.addInterfaces(path: "/o", [DBusInterfaceExport(name: "org.example.Add", methods: [
            "Inc": DBusMethod(in: "u", out: "u") { inv in [.uint32(UInt32(inv.arguments[0].int! + 1))] },
        ])])
        let dest = server.uniqueName
        let sum = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<100 {
                group.addTask {
                    let r = try await client.call(destination: dest, path: "/o", interface: "org.example.Add",
                                                  method: "Inc", arguments: [.uint32(UInt32(i))])
                    return r[0].int!
                }
            }
            return try await group.reduce(0, +)
        }
        #expect(sum == (0..<100).reduce(0, +) + 100)
        server.close()
        client.close()
    }

    @Test func connectingToNothingFailsWithAnError() {
        #expect(throws: DBusError.self) {
            _ = try DBusConnection.connect(address: "unix:path=/nonexistent/bus", logger: logger)
        }
    }
}
