import Foundation
import Testing

/// Reading a characteristic that needs a bond makes BlueZ 5.66 try to pair and drop the link: the
/// bridge remembers such characteristics (in the state file too) and does not read them again. An
/// ATT 0x0e ("unlikely error") answered while the link stays up is an ordinary read failure. The device is found by
/// its service, not configured: BlueZ's pairing asks the bridge's agent, which rejects it (SPEC §11: the agent
/// answers only for configured devices), and the bridge does not pair it either.
@Suite(.serialized) struct PairingRefusalTests {
    static let address = "C0:FF:EE:00:00:02"
    static let service = "6e5a0010-0000-4000-8000-00000000abcd"
    static let encrypted = "6e5a0011-0000-4000-8000-00000000abcd"
    static let unlikely = "6e5a0012-0000-4000-8000-00000000abcd"
    static let plain = "6e5a0013-0000-4000-8000-00000000abcd"

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
            address: "00:11:22:33:44:66"
        devices:
          - name: Secure Sim
            address: "\(address)"
            advertise: ["\(service)"]
            services:
              - uuid: "\(service)"
                characteristics:
                  - { uuid: "\(encrypted)", flags: [encrypt-read], value: "01" }
                  - { uuid: "\(unlikely)", flags: [read], read_error: "0x0e" }
                  - { uuid: "\(plain)", flags: [read], value: "cafe" }

        """

    @Test("an encrypted characteristic is remembered (state file) and not read again; ATT 0x0e with the link up is not")
    func refusals() async throws {
        let dir = NSTemporaryDirectory() + "pairing-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let stateFile = "\(dir)/peripherals.json"
        var options = HarnessOptions()
        options.scenarioText = Self.scenario
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            bluetooth:
              adapter: hci0
              services: ["\(Self.service)"]
            reconnect: { initial_delay: 200ms, max_delay: 500ms }
            state_file: \(stateFile)

            """
        }
        try await Harness.with(options) { harness in
            let device = "c0ffee000002"
            try await harness.waitFor("ble/\(device)/\(Self.service)/\(Self.plain)", timeout: .seconds(30)) {
                $0.object?["raw"] as? String == "cafe"
            }
            try await harness.waitForBridgeLog("the refused read of the encrypted characteristic") {
                $0.contains("refused") && $0.contains("needs pairing")
            }
            // The link came back and the bridge settles online: that connection's setup reads are
            // done (a read of the encrypted one would have dropped the link before).
            try await harness.waitFor("ble/\(device)/availability") { $0.payload == "online" }
            let state = try await StateFileContent.wait(stateFile, "the state file with 'unreadable'", context: { harness.context() }) {
                $0.entry(Self.address)?["unreadable"] != nil
            }
            let unreadable = state.entry(Self.address)?["unreadable"] as? [String]
            #expect(unreadable == [Self.encrypted], "only the encrypted characteristic: \(String(describing: unreadable))")
            // A read behind whatever the device's GATT queue still held: had a read of the
            // encrypted one been queued, the link would have dropped first.
            let after = try await harness.getCommand(
                "ble/\(device)/\(Self.service)/\(Self.plain)", #"{"transaction": "after"}"#, transaction: "after")
            #expect(after.status == "ok" && after.raw == "cafe", "\(after)")
            // The encrypted one was read once: one pairing attempt, rejected by the bridge's agent, one link lost,
            // as the peripheral saw it; the bridge did not try Pair itself.
            let stats = try await harness.simStats()
            #expect(stats.count(Self.address, "pairing_failures") == 1, "\(stats.device(Self.address))")
            #expect(stats.count(Self.address, "pairings") == 0, "\(stats.device(Self.address))")
            #expect(stats.count(Self.address, "link_losses") == 1, "\(stats.device(Self.address))")
            #expect(
                harness.bridgeLog.contains("pairing agent: RequestAuthorization from \(Self.address)")
                    && harness.bridgeLog.contains("rejected: \(Self.address) is not a configured device"),
                "the agent rejected the stranger")
            #expect(!harness.bridgeLog.contains("pairing failed"), "the bridge did not pair a device it was not configured for")
            let log = harness.bridgeLog
            #expect(log.components(separatedBy: "needs pairing").count - 1 == 1, "refused more than once:\n\(log)")
            #expect(log.contains("ReadValue") && log.contains("0x0e"), "the 0x0e read failure is logged")
        }
    }
}
