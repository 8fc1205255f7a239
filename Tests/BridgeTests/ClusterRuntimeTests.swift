import BlueZ
import BridgeCore
import DBusKit
import MQTT
import Testing

@testable import Bridge

/// A cluster member's runtime over the fakes (SPEC §10): it connects a wanted device only once its claim held, and
/// lets it go when the broker's order gives it to another bridge.
@Suite(.timeLimit(.minutes(2))) struct ClusterRuntimeTests {
    static let config = "homeassistant/device/ble_e45f01abcdef/config"

    func deliver(_ h: RuntimeHarness, _ topic: String, _ text: String) {
        h.runtime.intake.handle(MQTTMessage(topic: topic, payload: Array(text.utf8), qos: 1, retain: true))
    }

    @Test("claim, serve, then yield to another bridge's claim: one link, its config not sent again, its commands ignored")
    func claimServeYield() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bridge: { id: kitchen }
            cluster: { enabled: true }
            homeassistant: { discovery: true }
            devices:
              - match: { address: "E4:5F:01:AB:CD:EF" }
                name: thermo
            """)
        let path = h.central.addDevice(
            "E4:5F:01:AB:CD:EF", name: "Thermo", services: ["181a": [("2a6e", ["read", "notify"], [0x34, 0x08])]])
        h.runtime.supervisorMailbox.send(.brokerConnected)
        try await h.run {
            try await h.eventually("the first sightings") { h.broker.last("ble/bridges/kitchen/sightings") != nil }
            #expect(h.broker.subscriptions.contains("ble/+/owner"))
            h.central.setProperties(path, BlueZ.device, ["RSSI": .int16(-55)])
            try await h.advance(.seconds(4))
            #expect(h.broker.texts("ble/thermo/owner").isEmpty, "no claim in the first 5 s on the broker")
            #expect(h.central.calls("Connect").isEmpty)
            try await h.eventually("the claim") { h.broker.last("ble/thermo/owner") != nil }
            let claim = try #require(h.broker.last("ble/thermo/owner"))
            #expect(try OwnerPayload(bytes: Array(claim.utf8)).bridge == "kitchen")
            #expect(h.central.calls("Connect").isEmpty, "not before the claim wait")
            deliver(h, "ble/thermo/owner", claim)
            try await h.eventually("connected after the claim wait") { h.broker.last("ble/thermo/availability") == "online" }
            #expect(h.central.calls("Connect").count == 1)
            try await h.eventually("the discovery config") { h.broker.last(Self.config) != nil }
            // The next beat (at most 5 s) tells the others of the link.
            try await h.eventually("sightings with the link") {
                h.broker.last("ble/bridges/kitchen/sightings").flatMap { try? SightingsPayload(bytes: Array($0.utf8)) }?
                    .devices["thermo"]?.connected == true
            }

            // Another bridge's claim comes after ours in the broker's order: disconnect at once.
            deliver(h, "ble/bridges/garage/state", "online")
            deliver(h, "ble/thermo/owner", #"{"bridge":"garage","adapter":"hci0","since":1}"#)
            try await h.eventually("disconnected") { !h.central.calls("Disconnect").isEmpty }
            try await h.eventually("offline") { h.broker.last("ble/thermo/availability") == "offline" }
            try await h.advance(.seconds(10))
            #expect(h.central.calls("Connect").count == 1, "no new link while garage owns it")

            // Home Assistant comes back: this bridge does not send the device's config again (garage's counts).
            let configs = h.broker.texts(Self.config).count
            deliver(h, "homeassistant/status", "online")
            try await h.advance(.seconds(3))
            #expect(h.broker.texts(Self.config).count == configs)
            #expect(!h.broker.texts("homeassistant/device/ble_mqtt_bridge_ble-mqtt-bridge-kitchen/config").isEmpty)

            // garage's commands: not answered here.
            let published = h.broker.all.count
            h.command("ble/thermo/181a/2a6e/get", "")
            try await h.settle()
            #expect(h.broker.all.count == published)
        }
    }
}
