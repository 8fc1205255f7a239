import TestSupport
import BridgeBase
import Foundation
import Logging
import Testing

@testable import DBusKit

/// Every call completes: when the bus goes away, when the connection is closed, when its task is
/// cancelled; never a leaked continuation.
@Suite(.timeLimit(.minutes(1)))
struct DBusCallCompletionTests {
    let logger = Logger(label: "test")

    /// A server whose `Hang` method never answers (it sleeps for an hour) and a client (its I/O on
    /// `clientLoop` when given).
    private func hangingServer(
        _ bus: TestBus, clientLoop: PollLoop? = nil
    ) async throws -> (server: (DBusConnection, DBusObjectServer), client: DBusConnection) {
        let server = try DBusConnection.connect(address: bus.address, logger: logger)
        let client = try DBusConnection.connect(address: bus.address, logger: logger, loop: clientLoop)
        try await server.requestName("org.example.Hang")
        let objects = DBusObjectServer(connection: server, logger: logger)
        objects.addInterfaces(path: "/h", [
            DBusInterfaceExport(name: "org.example.Hang", methods: [
                "Hang": DBusMethod { _ in
                    try await Task.sleep(for: .seconds(3600))
                    return []
                },
                "Ping": DBusMethod { _ in [.string("pong")] },
            ])
        ])
        return ((server, objects), client)
    }

    private func hang(_ client: DBusConnection) async -> DBusError? {
        do {
            _ = try await client.call(
                destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Hang",
                timeout: .seconds(3600))
            return nil
        } catch {
            return error
        }
    }

    /// Waits (bounded) until `condition` holds, polling.
    private func eventually(_ what: String, _ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !condition() {
            guard ContinuousClock.now < deadline else {
                Issue.record("timed out waiting for \(what)")
                return
            }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func callsFailWhenTheBusDaemonDies() async throws {
        let bus = try TestBus()
        let (server, client) = try await hangingServer(bus)
        defer { withExtendedLifetime(server) {} }
        let all = try await withThrowingTaskGroup(of: DBusError?.self) { group in
            for _ in 0..<20 {
                group.addTask { await hang(client) }
            }
            // The calls are out (the server answers a ping sent after them).
            _ = try await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
            kill(bus.process.processIdentifier, SIGKILL)
            var all: [DBusError?] = []
            for try await e in group { all.append(e) }
            return all
        }
        #expect(all.count == 20)
        #expect(all.allSatisfy { $0?.name == DBusError.Name.disconnected }, "\(all)")
        // A call afterwards fails at once.
        await #expect(throws: DBusError.self) {
            _ = try await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
        }
        #expect(!client.isConnected)
    }

    @Test func callsFailWhenTheSharedLoopStops() async throws {
        // A connection on a loop it does not own: when that loop stops, nothing reads replies
        // or fires timeouts any more. Outstanding calls must fail, and new ones at once.
        let bus = try TestBus()
        let loop = PollLoop(name: "test-shared")
        loop.start()
        let (server, client) = try await hangingServer(bus, clientLoop: loop)
        defer { withExtendedLifetime(server) {} }
        async let outcome = hang(client)
        _ = try await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
        loop.stop()
        let error = await outcome
        #expect(error?.name == DBusError.Name.disconnected)
        let started = ContinuousClock.now
        await #expect(throws: DBusError.self) {
            _ = try await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
        }
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(!client.isConnected)
    }

    @Test func callsFailWhenTheConnectionIsClosed() async throws {
        let bus = try TestBus()
        let (server, client) = try await hangingServer(bus)
        defer { withExtendedLifetime(server) {} }
        async let outcome = hang(client)
        _ = try await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
        client.close()
        client.close()  // twice is harmless
        let error = await outcome
        #expect(error?.name == DBusError.Name.disconnected)
        let started = ContinuousClock.now
        await #expect(throws: DBusError(DBusError.Name.disconnected, "the D-Bus connection is closed")) {
            _ = try await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
        }
        #expect(ContinuousClock.now - started < .seconds(5))
    }

    @Test func cancellingTheTaskCancelsTheCall() async throws {
        let bus = try TestBus()
        let (server, client) = try await hangingServer(bus)
        defer { withExtendedLifetime(server) {} }
        let task = Task { await hang(client) }
        _ = try await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
        let started = ContinuousClock.now
        task.cancel()
        let error = await task.value
        #expect(error?.name == DBusError.Name.cancelled, "\(String(describing: error))")
        // At once (the call itself would take an hour); generous for a loaded machine.
        #expect(ContinuousClock.now - started < .seconds(5))
        // The connection still works.
        let reply = try await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
        #expect(reply == [.string("pong")])
    }

    @Test func aCallInACancelledTaskIsNotSent() async throws {
        let bus = try TestBus()
        let (server, client) = try await hangingServer(bus)
        defer { withExtendedLifetime(server) {} }
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await hang(client)
        }
        #expect(await task.value?.name == DBusError.Name.cancelled)
    }

    /// 120: dbus-daemon allows 128 pending replies per connection by default, and a cancelled
    /// call still counts there until the server answers.
    @Test func manyCancelledCallsLeaveNothingBehind() async throws {
        let bus = try TestBus()
        let (server, client) = try await hangingServer(bus)
        defer { withExtendedLifetime(server) {} }
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<120 {
                group.addTask { await hang(client)?.name ?? "answered" }
            }
            // Let some of them reach the bus before the cancellation (others are cancelled before).
            _ = try? await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
            group.cancelAll()
            var all: [String] = []
            for await c in group { all.append(c) }
            return all
        }
        #expect(outcomes.filter { $0 == DBusError.Name.cancelled }.count == 120, "\(Set(outcomes))")
        try await eventually("no call left") { client.core.outstandingCalls == 0 }
        let reply = try await client.call(destination: "org.example.Hang", path: "/h", interface: "org.example.Hang", method: "Ping")
        #expect(reply == [.string("pong")])
    }
}
