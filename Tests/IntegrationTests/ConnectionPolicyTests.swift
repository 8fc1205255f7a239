import Foundation
import Testing

/// SPEC §6 on bluez-sim: poll cycles, on-demand commands, connection slots.
@Suite(.timeLimit(.minutes(2)))
struct ConnectionPolicyTests {
    @Test("poll: connect, read, disconnect, repeat; online between cycles; bridge/devices shows the policy")
    func pollCycles() async throws {
        let options = Policies.options(devices: """
              - match: { address: "\(Policies.thermo1)" }
                name: thermo
                connection: poll
                poll_interval: 2s
            """)
        try await Harness.with(options) { harness in
            // Three cycles: the humidity (read only) is published once per cycle.
            for n in 1...3 {
                _ = try await harness.waitFor("ble/thermo/181a/2a6f", after: 0, timeout: .seconds(15)) { _ in
                    harness.observer.messages("ble/thermo/181a/2a6f").count >= n
                }
            }
            let states = harness.observer.messages("ble/bridge/devices").compactMap { message -> Bool? in
                let entries = (JSON.array(message.payload) ?? []).compactMap { $0 as? [String: Any] }
                guard let e = entries.first(where: { $0["name"] as? String == "thermo" }) else { return nil }
                #expect(e["connection"] as? String == "poll", "\(e)")
                return JSON.bool(e["connected"])
            }
            // Connected and disconnected again between the cycles.
            let flips = zip(states, states.dropFirst()).filter { $0 != $1 }.count
            #expect(flips >= 4, "connected states in bridge/devices: \(states)")
            // Online after the first cycle, and never offline between successful cycles.
            let availability = harness.observer.messages("ble/thermo/availability").map(\.payload)
            #expect(availability.last == "online")
            #expect(availability.drop { $0 != "online" }.allSatisfy { $0 == "online" }, "\(availability)")
            // No subscription without listen: temperature is read, not notified every 200 ms. The
            // simulator counts the subscriptions (a count of messages would depend on how many
            // cycles fit in the time the checks above took).
            #expect(!harness.observer.messages("ble/thermo/181a/2a6e").isEmpty, "temperature is read")
            let stats = try await harness.simStats()
            #expect(stats.count(Policies.thermo1, "start_notify_calls") == 0)
            #expect(stats.count(Policies.thermo1, "acquire_notify_calls") == 0)
        }
    }

    @Test("poll with listen: notifications arrive while listening")
    func pollListens() async throws {
        let options = Policies.options(devices: """
              - match: { address: "\(Policies.thermo1)" }
                name: thermo
                connection: poll
                poll_interval: 4s
                listen: 2s
            """)
        try await Harness.with(options) { harness in
            let online = try await harness.waitFor("ble/thermo/availability", timeout: .seconds(15)) { $0.payload == "online" }
            // Notifications every 200 ms for 2 s, then the link goes.
            _ = try await harness.waitFor("ble/thermo/181a/2a6e", timeout: .seconds(10)) { _ in
                harness.observer.messages("ble/thermo/181a/2a6e").count >= 5
            }
            let down = try await harness.waitFor("ble/bridge/devices", after: online.index, timeout: .seconds(10)) { message in
                Self.thermoConnected(message) == false
            }
            // Until the next cycle connects (4 s after the first began), no value may come: the
            // next cycle's link is the event that proves the bridge went through the whole gap.
            let up = try await harness.waitFor("ble/bridge/devices", after: down.index, timeout: .seconds(10)) { message in
                Self.thermoConnected(message) == true
            }
            let between = harness.observer.messages("ble/thermo/181a/2a6e").filter { $0.index > down.index && $0.index < up.index }
            #expect(between.isEmpty, "values after the disconnect: \(between)")
        }
    }

    /// Whether a `bridge/devices` message lists `thermo` as connected (nil: not listed).
    static func thermoConnected(_ message: MQTTMessage) -> Bool? {
        let entries = (JSON.array(message.payload) ?? []).compactMap { $0 as? [String: Any] }
        return entries.first { $0["name"] as? String == "thermo" }.flatMap { JSON.bool($0["connected"]) }
    }

    @Test("a /get and a /set for a poll device between cycles connect on demand and disconnect again")
    func onDemand() async throws {
        let options = Policies.options(commands: "commands: { timeout: 5s }", devices: """
              - match: { address: "\(Policies.valve)" }
                name: valve
                connection: poll
                poll_interval: 1h
            """)
        try await Harness.with(options) { harness in
            let online = try await harness.waitFor("ble/valve/availability", timeout: .seconds(15)) { $0.payload == "online" }
            // The first cycle's link goes down.
            _ = try await harness.waitFor("ble/bridge/devices", after: online.index, timeout: .seconds(10)) { message in
                let entries = (JSON.array(message.payload) ?? []).compactMap { $0 as? [String: Any] }
                return entries.contains { $0["name"] as? String == "valve" && JSON.bool($0["connected"]) == false }
            }
            let mark = harness.observer.count
            try await harness.publish("ble/valve/ffe0/ffe2/set", #"{"raw": "07", "transaction": "s"}"#)
            let set = try await harness.waitFor("ble/valve/ffe0/ffe2/result", after: mark, timeout: .seconds(6))
            #expect(set.payload.contains(#""status":"ok""#), "\(set)")
            let afterSet = harness.observer.count
            try await harness.publish("ble/valve/ffe0/ffe2/get", #"{"transaction": "g"}"#)
            let get = try await harness.waitFor("ble/valve/ffe0/ffe2/result", after: afterSet, timeout: .seconds(6))
            #expect(get.payload.contains(#""raw":"07""#), "\(get)")
            // Connected for the commands, then down again.
            _ = try await harness.waitFor("ble/bridge/devices", after: mark, timeout: .seconds(10)) { message in
                let entries = (JSON.array(message.payload) ?? []).compactMap { $0 as? [String: Any] }
                return entries.contains { $0["name"] as? String == "valve" && JSON.bool($0["connected"]) == true }
            }
            _ = try await harness.waitFor("ble/bridge/devices", after: get.index, timeout: .seconds(10)) { message in
                let entries = (JSON.array(message.payload) ?? []).compactMap { $0 as? [String: Any] }
                return entries.contains { $0["name"] as? String == "valve" && JSON.bool($0["connected"]) == false }
            }
        }
    }

    @Test("max_connections: 1 link for two always devices; the second connects when the first is gone")
    func oneSlot() async throws {
        let options = Policies.options(bluetooth: "  max_connections: 1", devices: """
              - match: { address: "\(Policies.thermo1)" }
                name: t1
              - match: { address: "\(Policies.thermo2)" }
                name: t2
            """)
        try await Harness.with(options) { harness in
            let first = try await harness.waitFor("ble/+/availability", timeout: .seconds(15)) { $0.payload == "online" }
            let firstName = first.topic.split(separator: "/")[1]
            let firstAddress = firstName == "t1" ? Policies.thermo1 : Policies.thermo2
            let other = firstName == "t1" ? "t2" : "t1"
            let otherAddress = firstName == "t1" ? Policies.thermo2 : Policies.thermo1
            // The other has asked for the slot and waits: the bridge has decided not to connect it.
            try await harness.waitForHealthCheck("one slot in use, one device waiting") { health in
                let slots = health["connection_slots"] as? [String: Any]
                return JSON.integer(slots?["in_use"]) == 1 && JSON.integer(slots?["waiting"]) == 1
            }
            #expect(harness.availability(other) != "online")
            let stats = try await harness.simStats()
            #expect(stats.count(otherAddress, "connect_attempts") == 0, "\(stats.device(otherAddress))")
            #expect(Policies.connectedCounts(harness).allSatisfy { $0 <= 1 }, "\(Policies.connectedCounts(harness))")
            _ = try await harness.simControl("SetInRange", firstAddress, "false")
            try await harness.waitFor("ble/\(other)/availability", timeout: .seconds(20)) { $0.payload == "online" }
            #expect(Policies.connectedCounts(harness).allSatisfy { $0 <= 1 }, "\(Policies.connectedCounts(harness))")
        }
    }

    @Test("max_connections: 2 with an always device and two poll devices: never 3 links, both poll devices cycle")
    func slotsShared() async throws {
        let options = Policies.options(bluetooth: "  max_connections: 2", devices: """
              - match: { address: "\(Policies.valve)" }
                name: valve
              - match: { address: "\(Policies.thermo1)" }
                name: t1
                connection: poll
                poll_interval: 2s
              - match: { address: "\(Policies.thermo2)" }
                name: t2
                connection: poll
                poll_interval: 2s
            """)
        try await Harness.with(options) { harness in
            for device in ["t1", "t2"] {
                _ = try await harness.waitFor("ble/\(device)/181a/2a6f", timeout: .seconds(20)) { _ in
                    harness.observer.messages("ble/\(device)/181a/2a6f").count >= 2
                }
            }
            #expect(harness.availability("valve") == "online")
            let counts = Policies.connectedCounts(harness)
            #expect(counts.allSatisfy { $0 <= 2 }, "links at once: \(counts)")
            let stats = try await harness.simStats()
            #expect(stats.count(Policies.valve, "connects") == 1, "the always device kept its slot")
        }
    }
}
