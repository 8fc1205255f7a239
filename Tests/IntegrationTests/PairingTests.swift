import Foundation
import Testing

/// Pairing and bonding on bluez-sim (SPEC §11): the bridge's agent answers for configured devices, an encrypted
/// characteristic is read after Just Works or passkey pairing, a bond survives a reconnect, `unpair` removes it, a
/// wrong passkey fails and is reported.
@Suite(.serialized) struct PairingTests {
    static let service = "6e5a0020-0000-4000-8000-00000000abcd"
    static let secret = "6e5a0021-0000-4000-8000-00000000abcd"
    static let scale = "C0:FF:EE:00:01:01"
    static let lock = "C0:FF:EE:00:01:02"

    static let scenario = """
        settings:
          advertise_delay: 100ms
          connect_delay: 50ms
          resolve_delay: 100ms
          resolve_delay_cached: 50ms
          gatt_export_time: 50ms
          disconnect_delay: 50ms
          pairing_failure_delay: 100ms
        adapters:
          - name: hci0
            address: "00:11:22:33:44:77"
        devices:
          - name: Scale Sim
            address: "\(scale)"
            advertise: ["\(service)"]
            services:
              - uuid: "\(service)"
                characteristics:
                  - { uuid: "\(secret)", flags: [read], security: encrypted, value: "2a" }
          - name: Lock Sim
            address: "\(lock)"
            pairing: passkey
            passkey: "123456"
            advertise: ["\(service)"]
            services:
              - uuid: "\(service)"
                characteristics:
                  - { uuid: "\(secret)", flags: [read], security: authenticated, value: "2b" }

        """

    static func options(lockPasskey: String) -> HarnessOptions {
        var options = HarnessOptions()
        options.scenarioText = scenario
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            bluetooth:
              adapter: hci0
            reconnect: { initial_delay: 200ms, max_delay: 1s }
            devices:
              - { match: { address: "\(scale)" }, name: scale }
              - { match: { address: "\(lock)" }, name: lock, pairing: passkey, passkey: "\(lockPasskey)" }

            """
        }
        return options
    }

    static func device(_ devices: [String: Any], _ name: String) -> [String: Any]? {
        (devices["data"] as? [String: Any]).flatMap { ($0["devices"] as? [[String: Any]])?.first { $0["name"] as? String == name } }
    }

    @Test("Just Works and passkey: the encrypted values after pairing, bonded; a reconnect does not pair again; unpair removes the bond")
    func pairs() async throws {
        try await Harness.with(Self.options(lockPasskey: "123456")) { harness in
            let scale = try await harness.waitFor("ble/scale/\(Self.service)/\(Self.secret)", timeout: .seconds(30))
            #expect(scale.object?["raw"] as? String == "2a")
            let lock = try await harness.waitFor("ble/lock/\(Self.service)/\(Self.secret)", timeout: .seconds(30))
            #expect(lock.object?["raw"] as? String == "2b")
            var stats = try await harness.simStats()
            #expect(stats.count(Self.scale, "pairings") == 1 && stats.count(Self.lock, "pairings") == 1, "\(stats.raw)")
            #expect(stats.device(Self.lock)["bond_authenticated"] as? Bool == true, "the passkey made an authenticated bond")
            let log = harness.bridgeLog
            #expect(log.contains("pairing agent: RequestPasskey from \(Self.lock)") && log.contains("answered with the configured passkey"))
            #expect(log.contains("pairing agent: RequestAuthorization from \(Self.scale)") && log.contains("accepted"))
            let devices = try await harness.bridgeRequest("devices")
            for name in ["scale", "lock"] {
                let d = Self.device(devices, name)
                #expect(d?["paired"] as? Bool == true && d?["bonded"] as? Bool == true, "\(name): \(String(describing: d))")
            }

            // Bonded: a new connection reads it without pairing again.
            let mark = harness.observer.count
            _ = try await harness.bridgeRequest("reconnect", #""device": "scale""#)
            try await harness.waitFor("ble/scale/availability", after: mark) { $0.payload == "offline" }
            try await harness.waitFor("ble/scale/availability", after: mark) { $0.payload == "online" }
            let again = try await harness.getCommand("ble/scale/\(Self.service)/\(Self.secret)", #"{"transaction": "b"}"#, transaction: "b")
            #expect(again.status == "ok" && again.raw == "2a", "\(again)")
            stats = try await harness.simStats()
            #expect(stats.count(Self.scale, "pairings") == 1, "no second pairing: \(stats.device(Self.scale))")

            // unpair: BlueZ's object and the bond go; the scan finds it again and it pairs anew.
            // The mark before the request: the value may come before this task runs again.
            let beforeUnpair = harness.observer.count
            let answer = try await harness.bridgeRequest("unpair", #""device": "scale""#)
            #expect(answer["status"] as? String == "ok", "\(answer)")
            let paired = try await harness.waitFor("ble/scale/\(Self.service)/\(Self.secret)", after: beforeUnpair, timeout: .seconds(30))
            #expect(paired.object?["raw"] as? String == "2a")
            stats = try await harness.simStats()
            #expect(stats.count(Self.scale, "pairings") == 2, "paired again after unpair: \(stats.device(Self.scale))")
        }
    }

    @Test("a wrong passkey: pairing fails and is reported (log, /get result), no value; the Just Works device is unaffected")
    func wrongPasskey() async throws {
        try await Harness.with(Self.options(lockPasskey: "654321")) { harness in
            _ = try await harness.waitFor("ble/scale/\(Self.service)/\(Self.secret)", timeout: .seconds(30))
            try await harness.waitForBridgeLog("the failed pairing") { $0.contains("pairing failed") && $0.contains("is the passkey right?") }
            let stats = try await harness.simStats()
            #expect(stats.count(Self.lock, "pairings") == 0 && stats.count(Self.lock, "pairing_failures") >= 1, "\(stats.device(Self.lock))")
            #expect(harness.observer.all.allSatisfy { $0.topic != "ble/lock/\(Self.service)/\(Self.secret)" }, "no value of the lock")
            let reply = try await harness.getCommand("ble/lock/\(Self.service)/\(Self.secret)", #"{"transaction": "w"}"#, transaction: "w")
            #expect(reply.status == "error", "\(reply)")
        }
    }
}
