import BridgeBase
import DBusKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import BluezSimKit

/// How an acquired socket ends: link loss (every way the simulator has), the client closing its end,
/// the client leaving the bus; and a client that does not read.
@Suite(.serialized) struct AcquireNotifyLifecycleTests {
    static let sensor = AcquireNotifyTests.sensor
    static let chrc = BlueZNames.gattCharacteristic

    /// The ways a link ends.
    enum LinkEnd: String, CaseIterable, Sendable {
        case dropped, outOfRange, poweredOff, disconnectCall, deviceObjectRemoved, adapterRemoved
    }

    @Test("the link ends: the client sees POLLHUP, NotifyAcquired goes false, nothing stays acquired",
          arguments: LinkEnd.allCases)
    func linkEndHangsUp(_ end: LinkEnd) async throws {
        try await SimHarness.run(AcquireNotifyTests.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe1")
            let recorder = PropertyRecorder(h.client, path: path)
            let (fd, _) = try await h.acquireNotify(path)
            let socket = ClientSocket(fd: fd)
            defer { socket.close() }
            _ = try await socket.receive()
            try await recorder.wait(for: "NotifyAcquired", .bool(true))
            switch end {
            case .dropped: try await h.simulator.dropConnection(address: Self.sensor)
            case .outOfRange: try await h.simulator.setInRange(address: Self.sensor, false)
            case .poweredOff: try await h.simulator.setPowered(false)
            case .disconnectCall: try await h.call(h.devicePath(Self.sensor), BlueZNames.device, "Disconnect")
            case .deviceObjectRemoved: try await h.simulator.removeDeviceObject(address: Self.sensor)
            case .adapterRemoved: try await h.simulator.removeAdapter(named: "hci0")
            }
            #expect(await socket.waitForHangUp(), "no POLLHUP after \(end)")
            if end == .adapterRemoved {
                // The objects go without PropertiesChanged (bluetoothd: characteristic_free).
                #expect(recorder.values("NotifyAcquired") == [.bool(true)])
            } else {
                try await recorder.wait(for: "NotifyAcquired", .bool(false))
            }
            #expect(await h.counter(Self.sensor, "notify_acquired") == 0)
            #expect(await h.counter(Self.sensor, "notifying") == 0)
        }
    }

    @Test("after a link loss the characteristic can be acquired again once reconnected")
    func acquireAgainAfterReconnect() async throws {
        try await SimHarness.run(AcquireNotifyTests.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe1")
            let first = ClientSocket(fd: try await h.acquireNotify(path).0)
            defer { first.close() }
            try await h.simulator.dropConnection(address: Self.sensor)
            #expect(await first.waitForHangUp())
            try await h.connect(Self.sensor)
            #expect(try await h.property(path, Self.chrc, "NotifyAcquired") == .bool(false))
            let second = ClientSocket(fd: try await h.acquireNotify(path).0)
            defer { second.close() }
            let a = try await second.receive(), b = try await second.receive()
            #expect(Self.counter(b) == Self.counter(a) &+ 1)
            #expect(await h.counter(Self.sensor, "acquire_notify_calls") == 2)
        }
    }

    @Test("the client closes its end: NotifyAcquired false, no more values sent, acquirable again")
    func clientCloseStopsNotifications() async throws {
        try await SimHarness.run(AcquireNotifyTests.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe1")
            let recorder = PropertyRecorder(h.client, path: path)
            let socket = ClientSocket(fd: try await h.acquireNotify(path).0)
            _ = try await socket.receive()
            socket.close()
            try await recorder.wait(for: "NotifyAcquired", .bool(false))
            let sent = await h.counter(Self.sensor, "notifications_socket")
            let dropped = await h.counter(Self.sensor, "notify_socket_drops")
            #expect(sent >= 1)
            // Ten values of another characteristic later, ffe1 still sent nothing more.
            let otherPath = try await h.characteristicPath(Self.sensor, "ffe4")
            let other = PropertyRecorder(h.client, path: otherPath)
            try await h.call(otherPath, Self.chrc, "StartNotify")
            try await eventually("10 values of ffe4") { other.values("Value").count >= 10 }
            #expect(await h.counter(Self.sensor, "notifications_socket") == sent)
            #expect(await h.counter(Self.sensor, "notify_socket_drops") == dropped)
            #expect(await h.counter(Self.sensor, "notify_acquired") == 0)
            #expect(await h.counter(Self.sensor, "notifying") == 1)
            let again = ClientSocket(fd: try await h.acquireNotify(path).0)
            defer { again.close() }
            _ = try await again.receive()
        }
    }

    @Test("the acquiring client leaves the bus: values stop; the socket (and NotifyAcquired) stay until it hangs up")
    func acquirerLeavesTheBus() async throws {
        try await SimHarness.run(AcquireNotifyTests.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe1")
            let recorder = PropertyRecorder(h.client, path: path)
            let leaving = try h.newClient()
            let socket = ClientSocket(fd: try await h.acquireNotify(path, on: leaving).0)
            defer { socket.close() }
            _ = try await socket.receive()
            leaving.close()
            try await eventually("notifications stopped") { await h.counter(Self.sensor, "notifying") == 0 }
            #expect(try await h.property(path, Self.chrc, "NotifyAcquired") == .bool(true))
            await #expect(throws: AcquireNotifyTests.notifyAcquired) { try await h.acquireNotify(path) }
            socket.close()
            try await recorder.wait(for: "NotifyAcquired", .bool(false))
            let again = ClientSocket(fd: try await h.acquireNotify(path).0)
            defer { again.close() }
            _ = try await again.receive()
        }
    }

    @Test("a client that does not read: values are dropped and counted, the simulator goes on")
    func fullSocketDrops() async throws {
        try await SimHarness.run(AcquireNotifyTests.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe6")
            let socket = ClientSocket(fd: try await h.acquireNotify(path).0)
            defer { socket.close() }
            try await eventually("values dropped") { await h.counter(Self.sensor, "notify_socket_drops") > 0 }
            // Other characteristics still notify.
            let otherPath = try await h.characteristicPath(Self.sensor, "ffe4")
            let other = PropertyRecorder(h.client, path: otherPath)
            try await h.call(otherPath, Self.chrc, "StartNotify")
            try await eventually("5 values of ffe4") { other.values("Value").count >= 5 }
            // What was queued is whole packets of increasing counters.
            var last: UInt32?
            var queued = 0
            while let packet = socket.receiveNow(), queued < 100_000 {
                #expect(packet.count == 4)
                let value = Self.counter(packet)
                if let last { #expect(value > last) }
                last = value
                queued += 1
            }
            #expect(queued > 0)
        }
    }

    /// A little-endian 4-byte counter value.
    static func counter(_ packet: [UInt8]) -> UInt32 {
        packet.prefix(4).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }
}
