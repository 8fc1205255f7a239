import Foundation
import Testing

/// Notifications over `AcquireNotify` sockets on bluez-sim (real file-descriptor passing), with
/// `StartNotify` for a characteristic BlueZ refuses to hand over and for an indicate-only one.
@Suite(.serialized) struct NotifySocketTests {
    static let address = "C0:FF:EE:00:00:02"
    static let device = "c0ffee000002"
    static let indicated = "6e5a0011-0000-4000-8000-00000000abcd"
    static let service = "6e5a0010-0000-4000-8000-00000000abcd"

    static let scenario = """
        settings:
          advertise_delay: 100ms
          connect_delay: 100ms
          resolve_delay: 200ms
        adapters:
          - name: hci0
            address: "00:11:22:33:44:55"
        devices:
          - name: Socket Strap
            address: "\(address)"
            advertise: ["180d"]
            services:
              - uuid: "180d"
                characteristics:
                  - { uuid: "2a37", flags: [notify], generator: heart_rate, interval: 100ms }
              - uuid: "180f"
                characteristics:
                  - { uuid: "2a19", flags: [read, notify], generator: battery, interval: 100ms, acquire_notify: false }
              - uuid: "\(service)"
                characteristics:
                  - { uuid: "\(indicated)", flags: [indicate], generator: { kind: counter, bytes: 4 }, interval: 100ms }

        """

    @Test("2A37 over a socket, 2A19 refused (StartNotify), the indicate-only one StartNotify; a link loss hangs the socket up and the reconnect acquires it again")
    func socketsAndFallback() async throws {
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
            reconnect:
              initial_delay: 200ms
              max_delay: 1s
            log_level: debug

            """
        }
        try await Harness.with(options) { harness in
            let base = "ble/\(Self.device)"
            let topics = ["\(base)/180d/2a37", "\(base)/180f/2a19", "\(base)/\(Self.service)/\(Self.indicated)"]
            for topic in topics {
                try await harness.waitFor(topic, timeout: .seconds(30)) { $0.object?["raw"] != nil }
            }
            let stats = try await harness.simStats()
            #expect(stats.count(Self.address, "notify_acquired") == 1, "only 2A37 acquired: \(stats.device(Self.address))")
            #expect(stats.count(Self.address, "notifications_socket") > 0)
            #expect(stats.count(Self.address, "notifications_signal") > 0, "2A19 and the indicated one as signals")
            #expect(harness.bridgeLog.contains("AcquireNotify 180d/2a37: notifications over a socket"))
            #expect(harness.bridgeLog.contains("AcquireNotify 180f/2a19 refused"), "the fallback is logged")

            // Link loss: bluez-sim closes its end; the bridge sees the hang-up and, after the
            // reconnect, acquires 2A37 again.
            let logMark = harness.bridgeLog.utf8.count
            try await harness.simControl("DropConnection", Self.address)
            try await harness.waitFor("\(base)/availability", timeout: .seconds(10)) { $0.payload == "offline" }
            try await harness.waitFor("\(base)/availability", timeout: .seconds(30)) { $0.payload == "online" }
            let mark = harness.observer.count
            try await harness.waitFor("\(base)/180d/2a37", after: mark, timeout: .seconds(10)) { $0.object?["raw"] != nil }
            let after = try await harness.simStats()
            #expect(after.count(Self.address, "notify_acquired") == 1, "acquired again: \(after.device(Self.address))")
            #expect(after.count(Self.address, "notifications_socket") > stats.count(Self.address, "notifications_socket"))
            #expect(harness.bridgeLog(from: logMark).contains("hung up"), "the hang-up is in the log")
        }
    }
}
