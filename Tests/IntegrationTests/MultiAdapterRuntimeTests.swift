import Foundation
import Testing

/// Several adapters in one bridge (SPEC §10) on bluez-sim with two adapters: each device connected once,
/// through the adapter that hears it best; that adapter powered off (`Adapter1.Powered = false` over D-Bus,
/// as `bluetoothctl power off` does) → the device comes back through the other and its values flow again.
@Suite(.timeLimit(.minutes(3)))
struct MultiAdapterRuntimeTests {
    static let near0 = "C0:FF:EE:00:00:0A"
    static let near1 = "C0:FF:EE:00:00:0B"

    static let scenario = """
        settings:
          advertise_delay: 20ms
          advertise_jitter: 0ms
          rssi_interval: 100ms
          connect_delay: 50ms
          resolve_delay: 100ms
          resolve_delay_cached: 50ms
          gatt_objects_first: true
          disconnect_delay: 50ms
          connect_timeout: 1s
        adapters:
          - { name: hci0, address: "00:1A:7D:DA:71:10" }
          - { name: hci1, address: "00:1A:7D:DA:71:11" }
        devices:
          - name: Near0
            address: "\(near0)"
            rssi: { hci0: -50, hci1: -85 }
            services:
              - uuid: "180d"
                characteristics:
                  - { uuid: "2a37", flags: [notify], generator: heart_rate, interval: 200ms }
          - name: Near1
            address: "\(near1)"
            rssi: { hci0: -85, hci1: -50 }
            services:
              - uuid: "180d"
                characteristics:
                  - { uuid: "2a37", flags: [notify], generator: heart_rate, interval: 200ms }

        """

    static func options() -> HarnessOptions {
        var options = HarnessOptions()
        options.scenarioText = scenario
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            bluetooth:
              adapters: [hci0, hci1]
              services: ["180d"]
            devices:
              - { match: { address: "\(near0)" }, name: near0 }
              - { match: { address: "\(near1)" }, name: near1 }
            reconnect:
              initial_delay: 200ms
              max_delay: 1s

            """
        }
        return options
    }

    /// The adapter each linked peripheral's link is on (bluez-sim's `GetStats` `links`).
    static func links(_ harness: Harness) async throws -> [String: String] {
        let stats = try await harness.simStats()
        return stats.raw["links"] as? [String: String] ?? [:]
    }

    /// Waits for a value of `device` (a topic other than its availability) after message `after`.
    static func value(_ harness: Harness, _ device: String, after: Int) async throws {
        try await harness.waitFor("ble/\(device)/#", after: after, timeout: .seconds(20)) {
            !$0.topic.hasSuffix("/availability") && !$0.topic.hasSuffix("/set")
        }
    }

    /// `Adapter1.Powered` set over the system bus, as a user's tool does.
    static func setPowered(_ harness: Harness, _ adapter: String, _ on: Bool) async throws {
        var environment = ProcessInfo.processInfo.environment
        environment["DBUS_SYSTEM_BUS_ADDRESS"] = harness.busAddress
        let (termination, output) = try await ChildProcess.run(
            "/usr/bin/dbus-send",
            [
                "--system", "--print-reply", "--dest=org.bluez", "/org/bluez/\(adapter)",
                "org.freedesktop.DBus.Properties.Set", "string:org.bluez.Adapter1", "string:Powered",
                "variant:boolean:\(on)",
            ],
            environment: environment, directory: harness.directory, timeout: .seconds(15))
        guard termination == .exited(0) else { throw HarnessError("dbus-send Powered=\(on) on \(adapter) failed: \(output)") }
    }

    @Test("two adapters: each device connected once through the one that hears it best; its adapter powered off → back through the other, values again")
    func placementAndPowerOff() async throws {
        try await Harness.with(Self.options()) { harness in
            for device in ["near0", "near1"] {
                try await harness.waitFor("ble/\(device)/availability") { $0.payload == "online" }
                try await Self.value(harness, device, after: 0)
            }
            #expect(try await Self.links(harness) == [Self.near0: "hci0", Self.near1: "hci1"])
            let devices = try await harness.retained("ble/bridge/devices")
            let list = (try? JSONSerialization.jsonObject(with: Data(devices.payload.utf8))) as? [[String: Any]] ?? []
            let adapters = Dictionary(list.compactMap { d in (d["name"] as? String).map { ($0, d["adapter"] as? String ?? "") } }) { a, _ in a }
            #expect(adapters == ["near0": "hci0", "near1": "hci1"], "\(devices.payload)")

            // hci0 powered off: near0 comes back through hci1; near1 is left alone.
            let mark = harness.observer.count
            let log = harness.bridgeLog.utf8.count
            try await Self.setPowered(harness, "hci0", false)
            try await harness.waitFor("ble/near0/availability", after: mark) { $0.payload == "offline" }
            try await harness.waitFor("ble/near0/availability", after: mark) { $0.payload == "online" }
            let back = harness.observer.count
            try await Self.value(harness, "near0", after: back)
            #expect(try await Self.links(harness) == [Self.near0: "hci1", Self.near1: "hci1"])
            #expect(!harness.observer.all[mark...].contains { $0.topic == "ble/near1/availability" && $0.payload == "offline" })
            // Never two links for one peripheral (the simulators' one-link rule would have counted a conflict).
            let stats = try await harness.simStats()
            #expect(JSON.integer(stats.raw["link_conflicts"]) == 0, "\(stats.raw)")
            // The bridge left hci0 off (someone turned it off while hci1 serves).
            #expect(stats.adapter("hci0")["powered"] as? Bool == false, "\(stats.adapter("hci0"))")
            let after = String(harness.bridgeLog.utf8.dropFirst(log)) ?? ""
            #expect(after.contains("adapter hci0 is left off"), "\(after)")
        }
    }
}
