import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// The pairing agent in the runtime (SPEC §11): registered with BlueZ, answering by the configuration.
@Suite(.timeLimit(.minutes(1))) struct PairingAgentRuntimeTests {
    @Test("registered as KeyboardOnly with a passkey device; the passkey for it, Just Works for the others, strangers rejected")
    func answers() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            devices:
              - { match: { address: "D0:5A:00:00:EC:02" }, pairing: passkey, passkey: "012345" }
              - { match: { name: "Thermo*" } }
            """)
        let thermo = h.central.addDevice("E4:5F:01:AB:CD:EF", name: "Thermo 1", services: ["181a": []])
        try await h.run {
            try await h.eventually("the agent registered") { !h.central.calls("RegisterAgent").isEmpty }
            #expect(h.central.calls("RegisterAgent").map(\.path) == ["KeyboardOnly"])
            let lock = BlueZ.devicePath(adapter: "/org/bluez/hci0", address: "D0:5A:00:00:EC:02")
            #expect(h.central.askAgent(.requestPasskey(device: lock)) == .passkey(12345))
            #expect(h.central.askAgent(.requestAuthorization(device: thermo)) == .accept)
            #expect(h.central.askAgent(.requestConfirmation(device: thermo, passkey: 123)) == .accept)
            let stranger = BlueZ.devicePath(adapter: "/org/bluez/hci0", address: "11:22:33:44:55:66")
            guard case .reject? = h.central.askAgent(.requestAuthorization(device: stranger)) else {
                Issue.record("a stranger's pairing was not rejected")
                return
            }
            guard case .reject? = h.central.askAgent(.requestPasskey(device: thermo)) else {
                Issue.record("a passkey was given for a Just Works device")
                return
            }
            #expect(h.central.askAgent(.cancel) == .accept)
        }
    }
}
