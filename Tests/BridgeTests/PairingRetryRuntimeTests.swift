import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// SPEC §11 in the runtime: a failed pairing is not hammered. One `Pair` per connection, nothing more on that
/// connection, the agent refuses the device while the delay runs (30 s, then 60 s), a new session of the device
/// (BlueZ dropped its temporary object) keeps the delay, and `bridge/request/reconnect` starts it over.
@Suite(.timeLimit(.minutes(1))) struct PairingRetryRuntimeTests {
    static let lock = "D0:5A:00:00:EC:02"

    static func connects(_ h: RuntimeHarness) -> Int { h.central.calls("Connect").count }

    static func addLock(_ h: RuntimeHarness, signal: Bool = false) -> String {
        h.central.addDevice(
            Self.lock, name: "Lock", services: ["fff0": [(uuid: "fff1", flags: ["read"], value: [1]), (uuid: "fff2", flags: ["read"], value: [2])]],
            signal: signal)
    }

    @Test("a wrong passkey: one Pair per connection, then nothing on it; 30 s, then 60 s, also across a new session; the agent refuses meanwhile; reconnect starts over")
    func failedPairingBacksOff() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            devices:
              - { match: { address: "\(Self.lock)" }, name: lock, pairing: passkey, passkey: "012345" }
            """)
        let lock = Self.addLock(h)
        let first = h.central.characteristicPath(device: lock, "fff1")
        let refused = BlueZError(code: .failed, name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x05")
        let wrong = BlueZError(code: .authenticationFailed, name: "org.bluez.Error.AuthenticationFailed", message: "Authentication Failed")
        for _ in 0..<3 {
            h.central.failNext("ReadValue", first, refused)
            h.central.failNext("Pair", lock, wrong)
        }
        try await h.run {
            try await h.eventually("the first Pair") { h.central.calls("Pair").count == 1 }
            try await h.eventually("the disconnect") { h.central.calls("Disconnect").count == 1 }
            let failedAt = h.clock.now
            #expect(h.central.calls("ReadValue").count == 1, "nothing after the failed pairing: \(h.central.calls("ReadValue"))")
            guard case .reject? = h.central.askAgent(.requestPasskey(device: lock)) else {
                Issue.record("the agent answered for the device whose pairing failed")
                return
            }
            #expect(h.logLines.filter { $0.contains("pairing failed") }.count == 1, "\(h.logLines)")
            #expect(h.logLines.contains { $0.contains("pairing failed") && $0.contains("next attempt in 30.0 seconds") }, "\(h.logLines)")

            try await h.advance(.seconds(20))
            // BlueZ drops the temporary device object; the scan finds it again: a new session, the same delay.
            h.central.dropObject(lock)
            try await h.advance(.seconds(1))
            _ = Self.addLock(h, signal: true)
            try await h.advance(.seconds(8))
            #expect(Self.connects(h) == 1, "no connection during the delay")
            try await h.eventually("the second connection") { Self.connects(h) == 2 }
            #expect(failedAt.duration(to: h.clock.now) >= .seconds(30))
            try await h.eventually("the second Pair") { h.central.calls("Pair").count == 2 }
            try await h.eventually("the second disconnect") { h.central.calls("Disconnect").count == 2 }
            let secondAt = h.clock.now
            #expect(h.central.calls("ReadValue").count == 2, "one read per connection")
            #expect(h.logLines.contains { $0.contains("pairing failed") && $0.contains("next attempt in 60.0 seconds") }, "\(h.logLines)")
            try await h.advance(.seconds(50))
            #expect(Self.connects(h) == 2, "the second delay is 60 s")

            // A reconnect request starts over: a connection now, and 30 s after its failure.
            h.command("ble/bridge/request/reconnect", #"{"device": "lock"}"#)
            try await h.eventually("the connection on request") { Self.connects(h) == 3 }
            #expect(secondAt.duration(to: h.clock.now) < .seconds(60))
            try await h.eventually("the third Pair") { h.central.calls("Pair").count == 3 }
            try await h.settle()
            #expect(h.logLines.filter { $0.contains("pairing failed") }.count == 3, "once per attempt: \(h.logLines)")
            #expect(h.logLines.last { $0.contains("pairing failed") }?.contains("next attempt in 30.0 seconds") == true, "\(h.logLines)")
        }
    }
}
