import BridgeBase
import DBusKit
import Testing

#if canImport(Glibc)
import Glibc
#endif

@testable import BluezSimKit

/// `GattCharacteristic1.AcquireNotify` with real file-descriptor passing, as bluetoothd 5.66 does it
/// (src/gatt-client.c): packets on the socket, `NotifyAcquired`, and the errors.
@Suite(.serialized) struct AcquireNotifyTests {
    static let sensor = "C8:12:34:56:78:9A"
    static let chrc = BlueZNames.gattCharacteristic

    /// One known sensor; fast timings; every GATT object exported before `ServicesResolved`.
    static let scenario = """
        settings: { connect_delay: 10ms, resolve_delay: 20ms, resolve_delay_cached: 10ms, gatt_objects_first: true,
                    disconnect_delay: 10ms, gatt_export_time: 10ms }
        devices:
          - address: "C8:12:34:56:78:9A"
            name: Sensor
            known: true
            mtu: 185
            services:
              - uuid: "ffe0"
                characteristics:
                  - { uuid: "ffe1", flags: [read, notify], generator: { kind: counter, bytes: 4 }, rate: 100 }
                  - { uuid: "ffe2", flags: [read, indicate], generator: { kind: counter, bytes: 2 }, rate: 50 }
                  - { uuid: "ffe3", flags: [read, notify], generator: { kind: counter, bytes: 2 }, rate: 100,
                      acquire_notify: false }
                  - { uuid: "ffe4", flags: [read, notify], values: ["01", "0203", "040506"], rate: 200 }
                  - { uuid: "ffe5", flags: [read, notify, write-without-response], value: "00" }
                  - { uuid: "ffe6", flags: [read, notify], generator: { kind: counter, bytes: 4 }, rate: 5000 }
                  - { uuid: "ffe7", flags: [read, notify], value: "00", notify_error: NotPermitted }
        """

    static let notSupported = DBusError("org.bluez.Error.NotSupported", "Operation is not supported")
    static let notifyAcquired = DBusError("org.bluez.Error.NotPermitted", "Notify acquired")
    static let inProgress = DBusError("org.bluez.Error.InProgress", "In Progress")

    @Test("values arrive on the fd, one SOCK_SEQPACKET packet per value, with the link's MTU; Value and Notifying stay")
    func valuesArriveAsPackets() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe4")
            let recorder = PropertyRecorder(h.client, path: path)
            let (fd, mtu) = try await h.acquireNotify(path)
            let socket = ClientSocket(fd: fd)
            defer { socket.close() }
            #expect(mtu == 185)
            #expect(socket.type == Int32(SOCK_SEQPACKET.rawValue))
            var packets: [[UInt8]] = []
            for _ in 0..<7 { packets.append(try await socket.receive()) }
            let cycle: [[UInt8]] = [[0x01], [0x02, 0x03], [0x04, 0x05, 0x06]]
            let start = try #require(cycle.firstIndex(of: packets[0]), "first packet \(packets[0])")
            #expect(packets == (0..<7).map { cycle[(start + $0) % 3] })
            #expect(try await h.property(path, Self.chrc, "Notifying") == .bool(false))
            #expect(try await h.property(path, Self.chrc, "Value") == .bytes([]))
            #expect(recorder.values("Value").isEmpty)
            #expect(recorder.values("Notifying").isEmpty)
            let stats = await h.stats(Self.sensor)
            #expect(stats["notifications_signal"] == .uint64(0))
            #expect((stats["notifications_socket"]?.int ?? 0) >= 7)
            #expect(stats["notify_acquired"] == .uint32(1))
            #expect(stats["acquire_notify_calls"] == .uint64(1))
        }
    }

    @Test("NotifyAcquired: false, true (signalled after the reply), false after StopNotify, which hangs the socket up")
    func notifyAcquiredFollowsTheSocket() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe1")
            #expect(try await h.property(path, Self.chrc, "NotifyAcquired") == .bool(false))
            let recorder = PropertyRecorder(h.client, path: path)
            let (fd, _) = try await h.acquireNotify(path)
            let socket = ClientSocket(fd: fd)
            defer { socket.close() }
            #expect(try await h.property(path, Self.chrc, "NotifyAcquired") == .bool(true))
            try await recorder.wait(for: "NotifyAcquired", .bool(true))
            _ = try await socket.receive()
            try await h.call(path, Self.chrc, "StopNotify")
            try await recorder.wait(for: "NotifyAcquired", .bool(false))
            #expect(await socket.waitForHangUp())
            #expect(recorder.values("NotifyAcquired") == [.bool(true), .bool(false)])
            #expect(try await h.property(path, Self.chrc, "NotifyAcquired") == .bool(false))
            #expect(await h.counter(Self.sensor, "notify_acquired") == 0)
            #expect(await h.counter(Self.sensor, "stop_notify_calls") == 1)
        }
    }

    @Test("an indicate-only characteristic is refused with NotSupported and has no NotifyAcquired")
    func indicateOnlyIsRefused() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe2")
            await #expect(throws: Self.notSupported) { try await h.acquireNotify(path) }
            await #expect(throws: DBusError.self) { try await h.property(path, Self.chrc, "NotifyAcquired") }
            try await h.call(path, Self.chrc, "StartNotify")
            #expect(await h.counter(Self.sensor, "acquire_notify_calls") == 1)
            #expect(await h.counter(Self.sensor, "notify_acquired") == 0)
        }
    }

    @Test("StartNotify and AcquireNotify exclude each other, whichever client asks")
    func startNotifyAndAcquireExcludeEachOther() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe1")
            let other = try h.newClient()
            defer { other.close() }
            try await h.call(path, Self.chrc, "StartNotify")
            await #expect(throws: Self.inProgress) { try await h.acquireNotify(path) }
            await #expect(throws: Self.inProgress) { try await h.acquireNotify(path, on: other) }
            try await h.call(path, Self.chrc, "StopNotify")
            let (fd, _) = try await h.acquireNotify(path)
            let socket = ClientSocket(fd: fd)
            defer { socket.close() }
            await #expect(throws: Self.notifyAcquired) { try await h.call(path, Self.chrc, "StartNotify") }
            await #expect(throws: Self.notifyAcquired) { try await h.call(path, Self.chrc, "StartNotify", on: other) }
            await #expect(throws: Self.notifyAcquired) { try await h.acquireNotify(path) }
            await #expect(throws: Self.notifyAcquired) { try await h.acquireNotify(path, on: other) }
            _ = try await socket.receive()
            #expect(await h.counter(Self.sensor, "notify_sessions") == 0)
        }
    }

    @Test("acquire_notify: false refuses with NotSupported; StartNotify then delivers the values as signals")
    func scenarioKeyRefuses() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe3")
            #expect(try await h.property(path, Self.chrc, "NotifyAcquired") == .bool(false))
            await #expect(throws: Self.notSupported) { try await h.acquireNotify(path) }
            let recorder = PropertyRecorder(h.client, path: path)
            try await h.call(path, Self.chrc, "StartNotify")
            try await eventually("3 values signalled") { recorder.values("Value").count >= 3 }
            let stats = await h.stats(Self.sensor)
            #expect((stats["notifications_signal"]?.int ?? 0) >= 3)
            #expect(stats["notifications_socket"] == .uint64(0))
            #expect(stats["notifications"] == stats["notifications_signal"])
        }
    }

    @Test("a refused CCC write (notify_error) is the call's error and leaves nothing acquired")
    func notifyErrorIsReturned() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe7")
            let refused = DBusError("org.bluez.Error.NotPermitted", "Write not permitted")
            await #expect(throws: refused) { try await h.acquireNotify(path) }
            await #expect(throws: refused) { try await h.acquireNotify(path) }
            #expect(try await h.property(path, Self.chrc, "NotifyAcquired") == .bool(false))
        }
    }

    @Test("disconnected: Failed \"Not connected\"; connected before the resolve: the reply waits for it")
    func notConnectedAndBeforeResolve() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe1")
            let device = h.devicePath(Self.sensor)
            try await h.call(device, BlueZNames.device, "Disconnect")
            await #expect(throws: DBusError("org.bluez.Error.Failed", "Not connected")) { try await h.acquireNotify(path) }
            try await h.simulator.setResolveBehaviour(address: Self.sensor, .delayed(.milliseconds(300)))
            try await h.call(device, BlueZNames.device, "Connect")
            #expect(try await h.property(device, BlueZNames.device, "ServicesResolved") == .bool(false))
            let (fd, _) = try await h.acquireNotify(path)
            let socket = ClientSocket(fd: fd)
            defer { socket.close() }
            #expect(try await h.property(device, BlueZNames.device, "ServicesResolved") == .bool(true))
            _ = try await socket.receive()
        }
    }

    @Test("a packet the client writes on the socket reaches the peripheral as a Write Without Response")
    func clientPacketIsAWriteCommand() async throws {
        try await SimHarness.run(Self.scenario) { h in
            try await h.connect(Self.sensor)
            let path = try await h.characteristicPath(Self.sensor, "ffe5")
            let (fd, _) = try await h.acquireNotify(path)
            let socket = ClientSocket(fd: fd)
            defer { socket.close() }
            #expect(socket.send([0xa1, 0xb2]))
            try await eventually("the write reached the peripheral") { await h.counter(Self.sensor, "writes") == 1 }
            let read = try await h.call(path, Self.chrc, "ReadValue", [.stringVariantDict([:])])
            #expect(read.first == .bytes([0xa1, 0xb2]))
        }
    }
}
