import BlueZ
import MQTT
import Testing

@testable import Bridge

/// SPEC §8 (commands.allow) and §9 (health) over the fakes.
@Suite struct CommandPolicyAndHealthTests {
    static func echo(_ h: RuntimeHarness) -> String {
        h.central.addDevice("D0:5A:00:00:EC:01", name: "Echo", services: [
            "ffe0": [("ffe1", ["read", "write"], [1]), ("ffe2", ["read", "write"], [2])],
        ])
    }

    @Test("a command whose target matches no commands.allow pattern is answered not_allowed and never sent")
    func allowList() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            commands: { allow: ["echo/ffe0/ffe1", "other/*/*"] }
            devices:
              - match: { address: "D0:5A:00:00:EC:01" }
                name: echo
            """)
        _ = Self.echo(h)
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/echo/availability") == "online" }
            h.command("ble/echo/ffe0/ffe2/set", #"{"raw": "aa", "transaction": 1}"#)
            h.command("ble/echo/ffe0/ffe2/get", "")
            h.command("ble/echo/ffe0/ffe1/set", #"{"raw": "bb", "transaction": 2}"#)
            try await h.eventually("three results") {
                h.broker.texts("ble/echo/ffe0/ffe2/result").count == 2 && h.broker.texts("ble/echo/ffe0/ffe1/result").count == 1
            }
        }
        #expect(h.broker.texts("ble/echo/ffe0/ffe2/result").allSatisfy { $0.contains(#""code":"not_allowed""#) })
        #expect(h.broker.texts("ble/echo/ffe0/ffe1/result").first?.contains(#""status":"ok""#) == true)
        #expect(h.central.calls("WriteValue").map(\.bytes) == [[0xbb]])
    }

    @Test("allow: [] makes the bridge read-only from MQTT")
    func readOnly() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            commands: { allow: [] }
            devices:
              - match: { address: "D0:5A:00:00:EC:01" }
                name: echo
            """)
        _ = Self.echo(h)
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/echo/availability") == "online" }
            let reads = h.central.calls("ReadValue").count
            h.command("ble/echo/ffe0/ffe1/get", "")
            try await h.eventually("the result") { h.broker.last("ble/echo/ffe0/ffe1/result") != nil }
            #expect(h.central.calls("ReadValue").count == reads)
        }
        #expect(h.broker.last("ble/echo/ffe0/ffe1/result")?.contains(#""code":"not_allowed""#) == true)
    }

    @Test("bridge/health every health.interval and on health_check, with the SPEC §9 fields")
    func health() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            health: { interval: 5s }
            devices:
              - match: { address: "D0:5A:00:00:EC:01" }
                name: echo
            """)
        let dev = Self.echo(h)
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/echo/availability") == "online" }
            h.central.notify(h.central.characteristicPath(device: dev, "ffe1"), [7])
            try await h.eventually("two health reports") { h.broker.texts("ble/bridge/health").count >= 2 }
            h.runtime.intake.handle(MQTTMessage(
                topic: "ble/bridge/request/health_check", payload: Array(#"{"transaction": 9}"#.utf8), qos: 1,
                retain: false, responseTopic: nil, correlationData: nil))
            try await h.eventually("the health_check answer") { h.broker.last("ble/bridge/response/health_check") != nil }
        }
        let reports = h.broker.all.filter { $0.message.topic == "ble/bridge/health" }
        #expect(reports.allSatisfy { !$0.message.retain })
        for text in [h.broker.texts("ble/bridge/health").last ?? "", h.broker.last("ble/bridge/response/health_check") ?? ""] {
            for field in [#""uptime_s":"#, #""rss_bytes":"#, #""mqtt":{"published":"#, #""dropped":"#, #""reconnects":"#,
                          #""bluez":{"available":true,"adapter":"hci0""#, #""powered":true"#, #""discovering":"#,
                          #""devices":{"echo":{"connected":true"#, #""values":"#, #""last_value_age_s":"#] {
                #expect(text.contains(field), "\(field) missing in \(text)")
            }
        }
        #expect(h.broker.last("ble/bridge/response/health_check")?.contains(#""transaction":9"#) == true)
    }
}
