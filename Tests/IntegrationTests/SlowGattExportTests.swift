import Foundation
import Testing

/// BlueZ 5.66 signals `ServicesResolved: true` and then exports the GATT objects one
/// `InterfacesAdded` at a time; under load the gaps between them exceed any fixed quiet period
/// (real-BlueZ run 2026-11-22: the bridge subscribed to the first service only). The bridge must
/// end up with every service and characteristic mapped, whatever the gaps.
@Suite(.serialized) struct SlowGattExportTests {
    static let address = "C0:FF:EE:00:00:01"
    static let device = "c0ffee000001"
    static let custom = "6e5a0001-0000-4000-8000-00000000abcd"
    static let customChar = "6e5a0002-0000-4000-8000-00000000abcd"

    /// One peripheral with four services (plus 1801) exported over 6 s after ServicesResolved:
    /// about 16 objects, one every ~375 ms.
    static let scenario = """
        settings:
          advertise_delay: 100ms
          connect_delay: 100ms
          resolve_delay: 200ms
          gatt_export_time: 6s
        adapters:
          - name: hci0
            address: "00:11:22:33:44:55"
        devices:
          - name: Slow Export
            address: "\(address)"
            advertise: ["180d"]
            services:
              - uuid: "180d"
                characteristics:
                  - { uuid: "2a37", flags: [notify], generator: heart_rate, interval: 200ms }
                  - { uuid: "2a38", flags: [read], value: "01" }
              - uuid: "180f"
                characteristics:
                  - { uuid: "2a19", flags: [read, notify], value: "4b" }
              - uuid: "180a"
                characteristics:
                  - { uuid: "2a29", flags: [read], value_text: "bluez-sim" }
              - uuid: "\(custom)"
                characteristics:
                  - { uuid: "\(customChar)", flags: [read, write], value: "c0de" }

        """

    @Test("GATT objects exported over 6 s after ServicesResolved: every service mapped, read and subscribed")
    func slowExport() async throws {
        var options = HarnessOptions()
        options.scenarioText = Self.scenario
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            bluetooth:
              adapter: hci0
              services: ["180d"]

            """
        }
        try await Harness.with(options) { harness in
            let base = "ble/\(Self.device)"
            // Reads of characteristics in the first and the last exported services.
            try await harness.waitFor("\(base)/180d/2a38", timeout: .seconds(30)) { $0.object?["value"] as? Int == 1 }
            try await harness.waitFor("\(base)/180a/2a29", timeout: .seconds(30)) {
                $0.object?["raw"] as? String == "626c75657a2d73696d"  // "bluez-sim"
            }
            try await harness.waitFor("\(base)/180f/2a19", timeout: .seconds(30)) { $0.object?["value"] as? Int == 75 }
            try await harness.waitFor("\(base)/\(Self.custom)/\(Self.customChar)", timeout: .seconds(30)) {
                $0.object?["raw"] as? String == "c0de"
            }
            // Notifications of the first service keep coming.
            let mark = harness.observer.count
            try await harness.waitFor("\(base)/180d/2a37", after: mark, timeout: .seconds(10)) { $0.object?["value"] != nil }
            // Commands reach the last service's characteristic.
            let reply = try await harness.setCommand(
                "\(base)/\(Self.custom)/\(Self.customChar)", #"{"raw":"beef","transaction":"slow"}"#, transaction: "slow")
            #expect(reply.status == "ok" && reply.response == true, "\(reply)")
            let devices = try await harness.waitFor("ble/bridge/devices") { message in
                let entry = JSON.array(message.payload)?.first as? [String: Any]
                return (entry?["services"] as? [String])?.contains(Self.custom) == true
            }
            let services = ((JSON.array(devices.payload)?.first as? [String: Any])?["services"] as? [String]) ?? []
            #expect(Set(services).isSuperset(of: ["180d", "180f", "180a", Self.custom]), "\(services)")
        }
    }
}
