import Foundation
import Testing

/// SPEC §14's error answers (`invalid_payload`, `exists`, `not_found`, `read_only`) and `management: false`.
extension ManagementTests {
    /// A refused request: the command, its payload (JSON object, or raw text when `raw` is set), the code expected.
    struct Refusal: Sendable, CustomStringConvertible {
        var description: String
        var command: String
        var payload: [String: String] = [:]
        var json: String?
        var raw: String?
        var code: String
    }

    /// JSON text of a `device/add` entry (kept as text: it is also written into a bridge.yaml for check-config).
    static func entryText(_ name: String?, address: String, extra: String = "") -> String {
        let named = name.map { #""name": "\#($0)", "# } ?? ""
        return #"{\#(named)"match": {"address": "\#(address)"}, "connection": "advertisement"\#(extra)}"#
    }

    static let refusals: [Refusal] = [
        Refusal(description: "device/add of a payload that is not JSON", command: "device/add", raw: "not json {", code: "invalid_payload"),
        Refusal(description: "device/add of a JSON array", command: "device/add", raw: "[1, 2]", code: "invalid_payload"),
        Refusal(
            description: "device/add without a name", command: "device/add", json: entryText(nil, address: Management.atcAddress),
            code: "invalid_payload"),
        Refusal(
            description: "device/add with a name that is no topic segment", command: "device/add",
            json: entryText("a/b", address: Management.atcAddress), code: "invalid_payload"),
        Refusal(
            description: "device/add of a name taken by bridge.yaml", command: "device/add",
            json: entryText("strap", address: Management.atcAddress), code: "exists"),
        Refusal(
            description: "device/add of an address taken by bridge.yaml", command: "device/add",
            json: entryText("strap2", address: Management.strapAddress), code: "exists"),
        Refusal(
            description: "device/add of a name taken at run time", command: "device/add",
            json: entryText("pantry", address: Management.atcAddress), code: "exists"),
        Refusal(
            description: "device/add of an address taken at run time", command: "device/add",
            json: entryText("pantry2", address: Management.pantryAddress), code: "exists"),
        Refusal(description: "device/remove that is not JSON", command: "device/remove", raw: "{", code: "invalid_payload"),
        Refusal(description: "device/remove without a device", command: "device/remove", payload: [:], code: "invalid_payload"),
        Refusal(description: "device/remove of an unknown name", command: "device/remove", payload: ["device": "nosuch"], code: "not_found"),
        Refusal(
            description: "device/rename of an unknown name", command: "device/rename", payload: ["device": "nosuch", "name": "other"],
            code: "not_found"),
        Refusal(description: "device/remove of a bridge.yaml device", command: "device/remove", payload: ["device": "strap"], code: "read_only"),
        Refusal(
            description: "device/rename of a bridge.yaml device", command: "device/rename", payload: ["device": "strap", "name": "belt"],
            code: "read_only"),
        Refusal(
            description: "device/rename to a name taken by bridge.yaml", command: "device/rename",
            payload: ["device": "pantry", "name": "thermo"], code: "exists"),
        Refusal(
            description: "device/rename to a name that is no topic segment", command: "device/rename",
            payload: ["device": "pantry", "name": "a+b"], code: "invalid_payload"),
        Refusal(description: "device/rename without a new name", command: "device/rename", payload: ["device": "pantry"], code: "invalid_payload"),
        Refusal(description: "scan of 0 seconds", command: "scan", json: #"{"seconds": 0}"#, code: "invalid_payload"),
        Refusal(description: "scan of 61 seconds", command: "scan", json: #"{"seconds": 61}"#, code: "invalid_payload"),
    ]

    /// Entries bridge.yaml refuses, whose `device/add` must be refused with check-config's own message.
    static let invalidEntries = [
        ("a bad address", entryText("bad", address: "C0:FF:EE:ZZ")),
        ("an unknown key", entryText("odd", address: Management.atcAddress, extra: #", "colour": "red""#)),
        ("an unknown connection policy", #"{"name": "odd", "match": {"address": "\#(Management.atcAddress)"}, "connection": "sometimes"}"#),
    ]

    @Test("every error code: invalid_payload (with the config loader's own messages), exists, not_found, read_only; each with the transaction; nothing changed by them")
    func errors() async throws {
        try await Harness.with(Management.options()) { harness in
            try await harness.waitFor("ble/strap/availability") { $0.payload == "online" }
            let (added, addTransaction) = try await harness.request("device/add", Management.pantryEntry())
            Management.expectOK(added, "device/add pantry", transaction: addTransaction)
            try await harness.waitFor("ble/pantry/availability") { $0.payload == "online" }
            let mark = harness.observer.count

            for refusal in Self.refusals {
                if let raw = refusal.raw {
                    let reply = try await harness.request(refusal.command, raw: raw)
                    Management.expectError(reply, code: refusal.code, refusal.description, transaction: nil)
                    continue
                }
                var payload: [String: Any] = refusal.payload
                if let json = refusal.json { payload = try #require(JSON.object(json), "\(refusal)") }
                let (reply, transaction) = try await harness.request(refusal.command, payload, timeout: .seconds(15))
                Management.expectError(reply, code: refusal.code, refusal.description, transaction: transaction)
            }

            // invalid_payload with the message bridge.yaml gets for the same entry.
            for (what, entry) in Self.invalidEntries {
                let expected = try await Management.checkConfigMessages(entry: entry, directory: harness.directory)
                let payload = try #require(JSON.object(entry), "\(entry)")
                let (reply, transaction) = try await harness.request("device/add", payload)
                let message = Management.expectError(reply, code: "invalid_payload", "device/add of \(what)", transaction: transaction)
                #expect(
                    expected.contains(message),
                    "device/add of \(what): the message is not the config loader's.\n  answer:       \(message)\n  check-config: \(expected)")
            }

            // Nothing was added, renamed or removed by a refused request; both devices are still served.
            let entries = harness.observer.messages("ble/config/devices/+").filter { $0.index >= mark }
            #expect(entries.isEmpty, "a refused request changed the run-time devices: \(entries)")
            try await harness.waitFor(Management.temperature("pantry"), after: harness.observer.count)
            try await harness.waitFor(Management.strapValues, after: harness.observer.count)
            #expect(harness.runningBridge.isRunning, "the bridge ended: \(harness.context())")
        }
    }

    @Test("management: false refuses every device/* request (read_only) but serves a retained config/devices entry published by hand; scan still answers")
    func managementOff() async throws {
        try await Harness.with(Management.options(management: false)) { harness in
            try await harness.waitFor("ble/strap/availability") { $0.payload == "online" }
            let mark = harness.observer.count
            let requests: [(String, [String: Any])] = [
                ("device/add", Management.advertisementEntry(name: "porch", address: Management.bthomeAddress)),
                ("device/rename", ["device": "strap", "name": "belt"]),
                ("device/remove", ["device": "strap"]),
            ]
            for (command, payload) in requests {
                let (reply, transaction) = try await harness.request(command, payload)
                Management.expectError(reply, code: "read_only", "\(command) with management: false", transaction: transaction)
            }

            // An entry published by hand (as another bridge or a script would) is served.
            let entry = String(
                decoding: try JSONSerialization.data(withJSONObject: Management.pantryEntry(), options: [.sortedKeys]), as: UTF8.self)
            try await harness.publishRetained("ble/config/devices/pantry", entry)
            try await harness.waitFor("ble/pantry/availability", after: mark) { $0.payload == "online" }
            try await harness.waitFor(Management.temperature("pantry"), after: mark)
            // It is run-time, but management is off: not removable here either.
            let (remove, removeTransaction) = try await harness.request("device/remove", ["device": "pantry"])
            Management.expectError(remove, code: "read_only", "device/remove of a run-time device with management: false", transaction: removeTransaction)

            let (scan, scanTransaction) = try await harness.request("scan", ["seconds": 1], timeout: .seconds(20))
            let data = Management.expectOK(scan, "scan with management: false", transaction: scanTransaction)
            #expect(data["devices"] is [Any], "\(scan)")

            let porch = harness.observer.messages("ble/porch/#").filter { $0.index >= mark }
            #expect(porch.isEmpty, "the refused device/add served porch: \(porch.prefix(3))")
            let added = harness.observer.messages("ble/config/devices/+").filter { $0.index >= mark && $0.topic != "ble/config/devices/pantry" }
            #expect(added.isEmpty, "a refused request published an entry: \(added)")
            try await harness.waitFor(Management.temperature("pantry"), after: harness.observer.count)
        }
    }
}
