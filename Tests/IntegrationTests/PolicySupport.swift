import Foundation

/// The peripherals of scripts/sim/policies.yaml and the harness options of the policy tests.
enum Policies {
    static var scenario: String { "\(Paths.root)/scripts/sim/policies.yaml" }
    static let thermo1 = "E4:5F:01:00:00:01"
    static let thermo2 = "E4:5F:01:00:00:02"
    static let valve = "D0:5A:00:00:00:0A"

    /// Options with the policies scenario and `devices` (YAML lines under `devices:`).
    static func options(bluetooth: String = "", commands: String = "", devices: String) -> HarnessOptions {
        var options = HarnessOptions()
        options.scenario = scenario
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            bluetooth:
              adapter: hci0
            \(bluetooth)
            reconnect:
              initial_delay: 200ms
              max_delay: 1s
            \(commands)
            devices:
            \(devices)
            """
        }
        return options
    }

    /// `bridge/devices` entries of the messages after index `after`: (name, connected) per message.
    static func connectedCounts(_ harness: Harness) -> [Int] {
        harness.observer.messages("ble/bridge/devices").map { message in
            (JSON.array(message.payload) ?? []).compactMap { $0 as? [String: Any] }.filter { JSON.bool($0["connected"]) == true }.count
        }
    }
}
