import BridgeBase
import DBusKit
import Foundation
import Synchronization
import Testing

@testable import BluezSimKit

/// A test agent (`org.bluez.Agent1`) exported on the harness's client connection: it records the
/// calls and answers them as told.
final class TestAgent: Sendable {
    let calls = Mutex<[String]>([])
    let passkey: UInt32?
    let reject: Bool

    init(passkey: UInt32? = nil, reject: Bool = false) {
        self.passkey = passkey
        self.reject = reject
    }

    var recorded: [String] { calls.withLock { $0 } }

    func export(on connection: DBusConnection, path: String = "/test/agent") -> DBusObjectServer {
        let server = DBusObjectServer(connection: connection, logger: SimHarness.logger)
        let rejected = DBusError("org.bluez.Error.Rejected", "rejected by the test")
        func method(_ name: String, in signature: DBusSignature, out: DBusSignature = "",
                    _ answer: @escaping @Sendable () throws(DBusError) -> [DBusValue] = { [] }) -> DBusMethod {
            DBusMethod(in: signature, out: out) { [self] inv in
                calls.withLock { $0.append(name) }
                if reject && name != "Cancel" { throw rejected }
                return try answer()
            }
        }
        server.addInterfaces(path: path, [DBusInterfaceExport(name: "org.bluez.Agent1", methods: [
            "RequestPasskey": method("RequestPasskey", in: "o", out: "u") { [passkey] () throws(DBusError) in
                guard let passkey else { throw rejected }
                return [.uint32(passkey)]
            },
            "RequestConfirmation": method("RequestConfirmation", in: "ou"),
            "RequestAuthorization": method("RequestAuthorization", in: "o"),
            "DisplayPasskey": method("DisplayPasskey", in: "ouq"),
            "Cancel": method("Cancel", in: ""),
            "Release": method("Release", in: ""),
        ])])
        return server
    }
}

@Suite(.serialized) struct PairingTests {
    static let plain = "C0:00:00:00:00:01"
    static let lock = "C0:00:00:00:00:02"
    static let refusing = "C0:00:00:00:00:03"
    static let scenario = """
        settings: { connect_delay: 10ms, resolve_delay: 10ms, resolve_delay_cached: 10ms, gatt_objects_first: true,
                    gatt_export_time: 0ms, disconnect_delay: 10ms, pairing_failure_delay: 50ms, pairing_timeout: 1s }
        devices:
          - name: Meter
            address: "C0:00:00:00:00:01"
            known: true
            services:
              - uuid: "1810"
                characteristics:
                  - { uuid: "2a35", flags: [read], security: encrypted, value: "01" }
                  - { uuid: "2a49", flags: [read], security: authenticated, value: "02" }
                  - { uuid: "2a36", flags: [read], value: "03" }
          - name: Lock
            address: "C0:00:00:00:00:02"
            known: true
            pairing: passkey
            passkey: "123456"
            services:
              - uuid: "fff0"
                characteristics:
                  - { uuid: "fff1", flags: [read, write], security: authenticated, value: "00" }
                  - { uuid: "fff2", flags: [notify], security: authenticated, value: "00" }
          - { name: Refuser, address: "C0:00:00:00:00:03", known: true, pairing: refuse }
        """

    static func register(_ h: SimHarness, _ capability: String, asDefault: Bool = true) async throws {
        try await h.call(BlueZNames.root, BlueZNames.agentManager, "RegisterAgent", [.objectPath("/test/agent"), .string(capability)])
        if asDefault {
            try await h.call(BlueZNames.root, BlueZNames.agentManager, "RequestDefaultAgent", [.objectPath("/test/agent")])
        }
    }

    @Test("the method table: Just Works without MITM; passkey entry for a keyboard against a display")
    func methodTable() {
        #expect(PairingMethod.select(local: .noInputNoOutput, remote: .noInputNoOutput, localMITM: false, remoteMITM: false) == .justWorks)
        #expect(PairingMethod.select(local: .keyboardOnly, remote: .displayOnly, localMITM: true, remoteMITM: true) == .passkeyEntry)
        #expect(PairingMethod.select(local: .keyboardDisplay, remote: .displayOnly, localMITM: true, remoteMITM: true) == .passkeyEntry)
        #expect(PairingMethod.select(local: .noInputNoOutput, remote: .displayOnly, localMITM: false, remoteMITM: true) == .justWorks)
        #expect(PairingMethod.select(local: .displayYesNo, remote: .displayYesNo, localMITM: true, remoteMITM: true) == .numericComparison)
        #expect(PairingMethod.select(local: .displayOnly, remote: .keyboardOnly, localMITM: true, remoteMITM: false) == .passkeyDisplay)
        // JUST_CFM as initiator is Just Works.
        #expect(PairingMethod.select(local: .displayYesNo, remote: .displayOnly, localMITM: true, remoteMITM: false) == .justWorks)
    }

    @Test("AgentManager1 errors as bluetoothd 5.66 gives them")
    func agentManagerErrors() async throws {
        try await SimHarness.run(Self.scenario) { h in
            let manager = BlueZNames.agentManager
            await #expect(throws: BluezError.invalidArguments) {
                try await h.call(BlueZNames.root, manager, "RegisterAgent", [.objectPath("/a"), .string("Telepathy")])
            }
            try await h.call(BlueZNames.root, manager, "RegisterAgent", [.objectPath("/a"), .string("KeyboardOnly")])
            await #expect(throws: BluezError.alreadyExists) {
                try await h.call(BlueZNames.root, manager, "RegisterAgent", [.objectPath("/b"), .string("")])
            }
            await #expect(throws: BluezError.doesNotExist) {
                try await h.call(BlueZNames.root, manager, "RequestDefaultAgent", [.objectPath("/b")])
            }
            try await h.call(BlueZNames.root, manager, "RequestDefaultAgent", [.objectPath("/a")])
            #expect(await h.simulator.defaultAgent?.path == "/a")
            try await h.call(BlueZNames.root, manager, "UnregisterAgent", [.objectPath("/a")])
            #expect(await h.simulator.defaultAgent == nil)
            await #expect(throws: BluezError.doesNotExist) {
                try await h.call(BlueZNames.root, manager, "UnregisterAgent", [.objectPath("/a")])
            }
            // A client leaving the bus loses its agent.
            let other = try h.newClient()
            try await h.call(BlueZNames.root, manager, "RegisterAgent", [.objectPath("/c"), .string("")], on: other)
            try await h.call(BlueZNames.root, manager, "RequestDefaultAgent", [.objectPath("/c")], on: other)
            #expect(await h.simulator.defaultAgent?.path == "/c")
            other.close()
            try await eventually("the agent of the closed client is dropped") { await h.simulator.defaultAgent == nil }
        }
    }

    @Test("an encrypted read with a default agent: RequestAuthorization, then the value and a bond; the bond survives a reconnect")
    func justWorksElevation() async throws {
        try await SimHarness.run(Self.scenario) { h in
            let agent = TestAgent()
            let agentServer = agent.export(on: h.client)
            _ = agentServer
            try await Self.register(h, "NoInputNoOutput")
            try await h.connect(Self.plain)
            let path = try await h.characteristicPath(Self.plain, "2a35")
            let value = try await h.call(path, BlueZNames.gattCharacteristic, "ReadValue", [.stringVariantDict([:])])
            #expect(value.first == .bytes([0x01]))
            #expect(agent.recorded == ["RequestAuthorization"])
            let device = h.devicePath(Self.plain)
            #expect(try await h.property(device, BlueZNames.device, "Paired") == .bool(true))
            #expect(try await h.property(device, BlueZNames.device, "Bonded") == .bool(true))
            // Just Works is not enough for an authenticated characteristic: it needs MITM, which
            // NoInputNoOutput cannot give; the pairing fails and the link drops.
            let auth = try await h.characteristicPath(Self.plain, "2a49")
            await #expect(throws: BluezError.att(0x0e)) {
                try await h.call(auth, BlueZNames.gattCharacteristic, "ReadValue", [.stringVariantDict([:])])
            }
            #expect(try await h.property(device, BlueZNames.device, "Connected") == .bool(false))
            // Reconnected, the bond encrypts the link: no agent call.
            try await h.connect(Self.plain)
            _ = try await h.call(path, BlueZNames.gattCharacteristic, "ReadValue", [.stringVariantDict([:])])
            #expect(agent.recorded == ["RequestAuthorization"])
            // RemoveDevice removes the bond.
            try await h.call(BlueZNames.adapterPath("hci0"), BlueZNames.adapter, "RemoveDevice", [.objectPath(device)])
            #expect(await h.counter(Self.plain, "pairings") == 1)
            #expect((await h.stats(Self.plain))["paired"] == .bool(false))
        }
    }

    @Test("Pair with a passkey agent: the right passkey bonds (authenticated), a wrong one fails with AuthenticationFailed")
    func passkey() async throws {
        try await SimHarness.run(Self.scenario) { h in
            let wrong = TestAgent(passkey: 654_321)
            let wrongServer = wrong.export(on: h.client)
            _ = wrongServer
            try await Self.register(h, "KeyboardOnly", asDefault: false)
            let device = h.devicePath(Self.lock)
            await #expect(throws: BluezError.authenticationFailed) { try await h.call(device, BlueZNames.device, "Pair") }
            #expect(wrong.recorded == ["RequestPasskey"])
            #expect(try await h.property(device, BlueZNames.device, "Paired") == .bool(false))
            try await eventually("the link dropped after the failed pairing") {
                (try? await h.property(device, BlueZNames.device, "Connected")) == .bool(false)
            }
            let client2 = try h.newClient()
            let right = TestAgent(passkey: 123_456)
            let rightServer = right.export(on: client2)
            _ = rightServer
            try await h.call(BlueZNames.root, BlueZNames.agentManager, "RegisterAgent",
                             [.objectPath("/test/agent"), .string("KeyboardDisplay")], on: client2)
            try await h.call(device, BlueZNames.device, "Pair", on: client2)
            #expect(right.recorded == ["RequestPasskey"])
            #expect(try await h.property(device, BlueZNames.device, "Paired") == .bool(true))
            #expect((await h.stats(Self.lock))["bond_authenticated"] == .bool(true))
            let path = try await h.characteristicPath(Self.lock, "fff1")
            let value = try await h.call(path, BlueZNames.gattCharacteristic, "ReadValue", [.stringVariantDict([:])])
            #expect(value.first == .bytes([0x00]))
            await #expect(throws: BluezError.alreadyExists) { try await h.call(device, BlueZNames.device, "Pair") }
            client2.close()
        }
    }

    @Test("AcquireNotify and StartNotify of an encrypted notify characteristic without a bond: bluetoothd pairs on its own with the default agent; a wrong passkey fails the call with ATT 0x0e and drops the link; pairing_attempts counts each pairing")
    func subscriptionElevation() async throws {
        try await SimHarness.run(Self.scenario) { h in
            let wrong = TestAgent(passkey: 654_321)
            let server = wrong.export(on: h.client)
            _ = server
            try await Self.register(h, "KeyboardOnly")
            let device = h.devicePath(Self.lock)
            try await h.connect(Self.lock)
            let path = try await h.characteristicPath(Self.lock, "fff2")
            await #expect(throws: BluezError.att(0x0e)) {
                try await h.call(path, BlueZNames.gattCharacteristic, "AcquireNotify", [.stringVariantDict([:])])
            }
            #expect(wrong.recorded == ["RequestPasskey"])
            #expect(try await h.property(device, BlueZNames.device, "Connected") == .bool(false))
            #expect(await h.counter(Self.lock, "pairing_attempts") == 1)
            #expect(await h.counter(Self.lock, "pairing_failures") == 1)
            try await h.connect(Self.lock)
            await #expect(throws: BluezError.att(0x0e)) { try await h.call(path, BlueZNames.gattCharacteristic, "StartNotify") }
            #expect(wrong.recorded == ["RequestPasskey", "RequestPasskey"])
            #expect(await h.counter(Self.lock, "pairing_attempts") == 2)
            #expect(await h.counter(Self.lock, "pairing_failures") == 2)
            #expect(await h.counter(Self.lock, "pairings") == 0)
        }
    }

    @Test("Pair: no agent, a rejecting agent, a refusing peripheral: AuthenticationFailed; a Just Works Pair asks no agent")
    func failures() async throws {
        try await SimHarness.run(Self.scenario) { h in
            let plain = h.devicePath(Self.plain)
            await #expect(throws: BluezError.authenticationFailed) { try await h.call(plain, BlueZNames.device, "Pair") }
            let agent = TestAgent(reject: true)
            let server = agent.export(on: h.client)
            _ = server
            try await Self.register(h, "KeyboardOnly")
            await #expect(throws: BluezError.authenticationFailed) {
                try await h.call(h.devicePath(Self.lock), BlueZNames.device, "Pair")
            }
            #expect(agent.recorded == ["RequestPasskey"])
            await #expect(throws: BluezError.authenticationFailed) {
                try await h.call(h.devicePath(Self.refusing), BlueZNames.device, "Pair")
            }
            // The Just Works Pair is accepted by bluetoothd itself (the user asked for it).
            try await eventually("the meter's link is down") {
                (try? await h.property(plain, BlueZNames.device, "Connected")) == .bool(false)
            }
            try await h.call(plain, BlueZNames.device, "Pair")
            #expect(agent.recorded == ["RequestPasskey"])
            #expect(try await h.property(plain, BlueZNames.device, "Paired") == .bool(true))
            await #expect(throws: BluezError.doesNotExist) { try await h.call(h.devicePath(Self.lock), BlueZNames.device, "CancelPairing") }
        }
    }

    @Test("the peripheral forgets the bond: Connect fails with le-connection-abort-by-local, the host keeps Paired")
    func forgottenBond() async throws {
        try await SimHarness.run(Self.scenario) { h in
            let plain = h.devicePath(Self.plain)
            try await Self.register(h, "NoInputNoOutput")
            try await h.call(plain, BlueZNames.device, "Pair")
            try await h.call(plain, BlueZNames.device, "Disconnect")
            try await h.simulator.forgetBond(address: Self.plain)
            await #expect(throws: BluezError.failed("le-connection-abort-by-local")) {
                try await h.call(plain, BlueZNames.device, "Connect")
            }
            #expect(try await h.property(plain, BlueZNames.device, "Paired") == .bool(true))
        }
    }
}
