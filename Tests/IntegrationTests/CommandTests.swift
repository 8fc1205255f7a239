import Foundation
import Testing

/// Commands over MQTT (issue 4, SPEC §4): `/set` and `/get` as a user publishes them with
/// `mosquitto_pub`, each answered by exactly one result on `.../result`; what reached the
/// peripheral is checked in bluez-sim's write log, byte for byte and by write type.
/// Scenario: scripts/sim/commands.yaml (see ``Commands``).
@Suite(.timeLimit(.minutes(2)))
struct CommandTests {
    typealias C = Commands

    // MARK: - Success paths

    @Test("writes: bare hex, JSON raw with and without response, forced types, transaction echoed; write log exact")
    func writeSuccessPaths() async throws {
        try await Harness.with(C.options()) { harness in
            try await harness.waitForCommandDevices([C.echo1])
            let request = C.topic(C.echo1, C.writeRequest)
            let command = C.topic(C.echo1, C.writeCommand)
            let both = C.topic(C.echo1, C.both)

            // Bare hex to a characteristic with `write`: with response.
            var mark = harness.observer.count
            var reply = try await harness.setCommand(request, "01ff")
            #expect(reply.status == "ok" && reply.op == "write" && reply.response == true, "\(reply)")
            #expect(reply.transaction == nil && reply.error == nil, "no transaction was given: \(reply)")
            try await harness.waitFor(C.topic(C.echo1, C.echoNotify), after: mark) { $0.object?["raw"] as? String == "01ff" }

            // The issue's example, to the write-without-response characteristic.
            reply = try await harness.setCommand(command, #"{"raw":"01ff","response":false,"transaction":42}"#, transaction: 42)
            #expect(reply.status == "ok" && reply.op == "write", "\(reply)")
            #expect(JSON.integer(reply.transaction) == 42, "transaction echoed as the number 42: \(reply)")
            #expect(reply.response == false, "\(reply)")

            // A bare payload to a write-without-response characteristic: without response.
            reply = try await harness.setCommand(command, "0304")
            #expect(reply.status == "ok" && reply.response == false, "\(reply)")

            // Both write types allowed: absent → request, false → command, true → request.
            reply = try await harness.setCommand(both, "0a0b")
            #expect(reply.status == "ok" && reply.response == true, "default is with response when allowed: \(reply)")
            reply = try await harness.setCommand(
                both, #"{"raw":"0C0D","response":false,"transaction":"t-false"}"#, transaction: "t-false")
            #expect(reply.status == "ok" && reply.response == false, "\(reply)")
            reply = try await harness.setCommand(
                both, #"{"raw":"0e0f","response":true,"transaction":{"id":[1,"x"]}}"#,
                transaction: ["id": [1, "x"]] as [String: Any])
            #expect(reply.status == "ok" && reply.response == true, "\(reply)")
            #expect(reply.hasTransaction(["id": [1, "x"]] as [String: Any]), "structured transaction echoed: \(reply)")
            // "response": true on a characteristic with only `write` is allowed too; null is absent.
            reply = try await harness.setCommand(request, #"{"raw":"10","response":true,"transaction":null}"#)
            #expect(reply.status == "ok" && reply.response == true, "\(reply)")
            #expect(reply.object.keys.contains("transaction") && reply.transaction is NSNull, "null echoed: \(reply)")
            reply = try await harness.setCommand(request, #"{"raw":"11","response":null,"transaction":7}"#, transaction: 7)
            #expect(reply.status == "ok" && reply.response == true, "\(reply)")
            // Zero bytes need the explicit form.
            reply = try await harness.setCommand(request, #"{"raw":"","transaction":"empty"}"#, transaction: "empty")
            #expect(reply.status == "ok" && reply.response == true, "\(reply)")

            // Barrier: the last write is in the log, so every earlier one is too.
            mark = harness.observer.count
            _ = try await harness.setCommand(request, "ff")
            try await harness.waitForLoggedWrite(C.echo1Address, C.writeRequest, "ff")
            let writes = harness.writeLogEntries.filter { $0.address == C.echo1Address }.map { "\($0.uuid) \($0.type) \($0.offset) \($0.hex)" }
            #expect(
                writes == [
                    "\(C.writeRequest) request 0 01ff",
                    "\(C.writeCommand) command 0 01ff",
                    "\(C.writeCommand) command 0 0304",
                    "\(C.both) request 0 0a0b",
                    "\(C.both) command 0 0c0d",
                    "\(C.both) request 0 0e0f",
                    "\(C.writeRequest) request 0 10",
                    "\(C.writeRequest) request 0 11",
                    "\(C.writeRequest) request 0 ",
                    "\(C.writeRequest) request 0 ff",
                ], "the write log of \(C.echo1Address):\n\(writes.joined(separator: "\n"))")
        }
    }

    @Test("writes of values in the configured format: uint16 and utf8, as {\"value\":...} and bare")
    func writeFormattedValues() async throws {
        try await Harness.with(C.options()) { harness in
            try await harness.waitForCommandDevices([C.echo1])
            let number = C.topic(C.echo1, C.number)
            let text = C.topic(C.echo1, C.text)

            var reply = try await harness.setCommand(number, #"{"value":4660,"transaction":1}"#, transaction: 1)
            #expect(reply.status == "ok" && reply.response == true, "\(reply)")
            reply = try await harness.setCommand(number, "513")
            #expect(reply.status == "ok", "bare number in format uint16: \(reply)")
            reply = try await harness.setCommand(number, #"{"value":65535}"#)
            #expect(reply.status == "ok", "\(reply)")
            reply = try await harness.setCommand(number, #"{"raw":"abcd"}"#)
            #expect(reply.status == "ok", "raw bypasses the format: \(reply)")

            reply = try await harness.setCommand(text, "héllo wörld")
            #expect(reply.status == "ok" && reply.response == true, "bare text in format utf8: \(reply)")
            reply = try await harness.setCommand(text, #"{"value":"ok","transaction":"t"}"#, transaction: "t")
            #expect(reply.status == "ok", "\(reply)")
            reply = try await harness.setCommand(text, #""quoted""#)
            #expect(reply.status == "ok", "a JSON string literal is unquoted: \(reply)")

            // A read gives back what was written last, decoded in the format.
            reply = try await harness.getCommand(number, #"{"transaction":"r"}"#, transaction: "r")
            #expect(reply.status == "ok" && reply.raw == "abcd" && JSON.integer(reply.value) == 0xcdab, "\(reply)")
            reply = try await harness.getCommand(text, "")
            #expect(reply.status == "ok" && reply.raw == Commands.hex(Array("quoted".utf8)), "\(reply)")
            #expect(reply.value as? String == "quoted", "\(reply)")

            let writes = harness.writeLogEntries.filter { $0.address == C.echo1Address }.map { "\($0.uuid) \($0.type) \($0.hex)" }
            #expect(
                writes == [
                    "\(C.number) request 3412",
                    "\(C.number) request 0102",
                    "\(C.number) request ffff",
                    "\(C.number) request abcd",
                    "\(C.text) request \(Commands.hex(Array("héllo wörld".utf8)))",
                    "\(C.text) request 6f6b",
                    "\(C.text) request \(Commands.hex(Array("quoted".utf8)))",
                ], "the write log of \(C.echo1Address):\n\(writes.joined(separator: "\n"))")
        }
    }

    @Test("reads: /get publishes the value on the value topic and a result with raw, value and transaction")
    func reads() async throws {
        try await Harness.with(C.options()) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.strap])

            // Body sensor location (decoded by default as its integer code), empty payload.
            let location = C.strapTopic("2a38")
            var mark = harness.observer.count
            var reply = try await harness.getCommand(location, "")
            #expect(reply.status == "ok" && reply.op == "read", "\(reply)")
            #expect(reply.raw == "01" && JSON.integer(reply.value) == 1, "\(reply)")
            #expect(reply.transaction == nil && !reply.hasResponse && reply.error == nil, "\(reply)")
            var value = try await harness.waitFor(location, after: mark)
            #expect(value.object?["raw"] as? String == "01" && JSON.integer(value.object?["value"]) == 1, "\(value)")
            #expect(value.index < reply.message.index, "the value is published before the result")

            // A transaction of any JSON; a payload that is not JSON is a plain read.
            mark = harness.observer.count
            let number = C.topic(C.echo1, C.number)
            reply = try await harness.getCommand(number, #"{"transaction":[1,{"a":null}]}"#, transaction: [1, ["a": NSNull()]] as [Any])
            #expect(reply.status == "ok" && reply.raw == "3412" && JSON.integer(reply.value) == 4660, "\(reply)")
            value = try await harness.waitFor(number, after: mark)
            #expect(value.object?["raw"] as? String == "3412" && JSON.integer(value.object?["value"]) == 4660, "\(value)")
            reply = try await harness.getCommand(C.topic(C.echo1, C.text), "anything at all")
            #expect(reply.status == "ok" && reply.value as? String == "hello" && reply.transaction == nil, "\(reply)")

            // After a write, a read returns the new bytes (hex where no format applies).
            _ = try await harness.setCommand(C.topic(C.echo1, C.both), #"{"raw":"c0de"}"#)
            reply = try await harness.getCommand(C.topic(C.echo1, C.both), #"{"transaction":3}"#, transaction: 3)
            #expect(reply.status == "ok" && reply.raw == "c0de" && reply.value as? String == "c0de", "\(reply)")
        }
    }

    // MARK: - Error codes

    @Test("invalid_payload: not hex, odd length, out of range, JSON of the wrong shape; nothing is written")
    func invalidPayload() async throws {
        try await Harness.with(C.options()) { harness in
            try await harness.waitForCommandDevices([C.echo1])
            let cases: [(topic: String, payload: String, transaction: Any?)] = [
                (C.topic(C.echo1, C.writeRequest), "zz", nil),
                (C.topic(C.echo1, C.writeRequest), "123", nil),
                (C.topic(C.echo1, C.writeRequest), "", nil),
                (C.topic(C.echo1, C.writeRequest), "   ", nil),
                (C.topic(C.echo1, C.writeRequest), #"{"raw":"0g","transaction":1}"#, 1),
                (C.topic(C.echo1, C.writeRequest), #"{"raw":"abc","transaction":2}"#, 2),
                (C.topic(C.echo1, C.writeRequest), #"{"raw":1,"transaction":3}"#, 3),
                (C.topic(C.echo1, C.writeRequest), #"{"raw":"01","value":"01","transaction":4}"#, 4),
                (C.topic(C.echo1, C.writeRequest), #"{"foo":1,"transaction":5}"#, 5),
                (C.topic(C.echo1, C.writeRequest), #"{"transaction":6}"#, 6),
                (C.topic(C.echo1, C.writeRequest), #"{"raw":"01","response":"yes","transaction":7}"#, 7),
                (C.topic(C.echo1, C.writeRequest), #"{"raw":"01","#, nil),
                (C.topic(C.echo1, C.writeRequest), "[1,2]", nil),
                (C.topic(C.echo1, C.writeRequest), #"{"raw":"\#(String(repeating: "ab", count: 513))","transaction":8}"#, 8),
                (C.topic(C.echo1, C.number), "70000", nil),
                (C.topic(C.echo1, C.number), "-1", nil),
                (C.topic(C.echo1, C.number), "1.5", nil),
                (C.topic(C.echo1, C.number), #"{"value":65536,"transaction":9}"#, 9),
                (C.topic(C.echo1, C.number), #"{"value":"12","transaction":10}"#, 10),
                (C.topic(C.echo1, C.number), "0102", nil),
                (C.topic(C.echo1, C.text), #"{"value":12,"transaction":11}"#, 11),
            ]
            for (topic, payload, transaction) in cases {
                let reply = try await harness.setCommand(topic, payload, transaction: transaction)
                #expect(reply.status == "error" && reply.op == "write", "\(payload) → \(reply)")
                #expect(reply.code == "invalid_payload", "\(payload) → \(reply)")
                #expect(!(reply.errorMessage ?? "").isEmpty, "an error has a message: \(reply)")
                if let transaction {
                    #expect(reply.hasTransaction(transaction), "the transaction is echoed also for errors: \(reply)")
                } else {
                    #expect(reply.transaction == nil, "\(reply)")
                }
            }
            // Invalid UTF-8 for a utf8 characteristic (bytes that `-m` cannot carry).
            let mark = harness.observer.count
            try await harness.publishPayloadFile("\(C.topic(C.echo1, C.text))/set", [0x68, 0xff, 0xfe, 0x69])
            let reply = try CommandReply(try await harness.waitFor("\(C.topic(C.echo1, C.text))/result", after: mark))
            #expect(reply.status == "error" && reply.code == "invalid_payload", "\(reply)")

            // Nothing reached the peripheral: a final valid write is the only one in the log.
            _ = try await harness.setCommand(C.topic(C.echo1, C.writeRequest), "5a")
            try await harness.waitForLoggedWrite(C.echo1Address, C.writeRequest, "5a")
            let writes = harness.writeLogEntries.filter { $0.address == C.echo1Address }
            #expect(writes.map(\.hex) == ["5a"], "invalid commands were written: \(writes)")
        }
    }

    @Test("unknown_characteristic: unknown characteristic, wrong service, unknown device")
    func unknownCharacteristic() async throws {
        try await Harness.with(C.options()) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.strap])
            let cases: [(topic: String, operation: String, payload: String, transaction: Any?)] = [
                (C.topic(C.echo1, C.uuid(0xff)), "set", "01", nil),
                (C.topic(C.echo1, C.uuid(0xff)), "get", #"{"transaction":"g"}"#, "g"),
                (C.topic(C.echo1, "2a39"), "set", #"{"raw":"01","transaction":1}"#, 1),
                ("ble/\(C.strap)/180f/2a38", "get", "", nil),
                ("ble/\(C.strap)/1800/2a00", "get", "", nil),
                ("ble/aabbccddeeff/180d/2a39", "set", #"{"raw":"01","transaction":2}"#, 2),
                ("ble/no_such_device/180d/2a38", "get", #"{"transaction":3}"#, 3),
            ]
            for (topic, operation, payload, transaction) in cases {
                let reply =
                    operation == "set"
                    ? try await harness.setCommand(topic, payload, transaction: transaction)
                    : try await harness.getCommand(topic, payload, transaction: transaction)
                #expect(reply.status == "error" && reply.op == (operation == "set" ? "write" : "read"), "\(topic) → \(reply)")
                #expect(reply.code == "unknown_characteristic", "\(topic) → \(reply)")
                if let transaction { #expect(reply.hasTransaction(transaction), "\(reply)") }
            }
            // Barrier writes on both devices (each answers in order through its one GATT queue):
            // nothing refused above reached a peripheral, however late.
            _ = try await harness.setCommand(C.topic(C.echo1, C.writeRequest), "5a")
            _ = try await harness.setCommand(C.strapTopic("2a39"), "01")
            try await harness.waitForLoggedWrite(C.echo1Address, C.writeRequest, "5a")
            try await harness.waitForLoggedWrite(C.strapAddress, C.controlPoint, "01")
            #expect(harness.writeLogEntries.map(\.hex).sorted() == ["01", "5a"], "nothing else may be written: \(harness.writeLogEntries)")
        }
    }

    @Test("not_writable, not_readable, unsupported_write_type; nothing is written")
    func flagErrors() async throws {
        try await Harness.with(C.options()) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.strap])
            var reply = try await harness.setCommand(C.strapTopic("2a38"), #"{"raw":"02","transaction":"nw"}"#, transaction: "nw")
            #expect(reply.status == "error" && reply.op == "write" && reply.code == "not_writable", "\(reply)")
            reply = try await harness.setCommand(C.strapTopic("2a38"), "2")
            #expect(reply.code == "not_writable", "a bare value in the format: \(reply)")

            reply = try await harness.getCommand(C.strapTopic("2a39"), #"{"transaction":"nr"}"#, transaction: "nr")
            #expect(reply.status == "error" && reply.op == "read" && reply.code == "not_readable", "\(reply)")
            reply = try await harness.getCommand(C.topic(C.echo1, C.writeCommand), "")
            #expect(reply.code == "not_readable", "\(reply)")

            reply = try await harness.setCommand(
                C.topic(C.echo1, C.writeCommand), #"{"raw":"0101","response":true,"transaction":"u1"}"#, transaction: "u1")
            #expect(reply.status == "error" && reply.code == "unsupported_write_type", "\(reply)")
            reply = try await harness.setCommand(
                C.topic(C.echo1, C.writeRequest), #"{"raw":"0202","response":false,"transaction":"u2"}"#, transaction: "u2")
            #expect(reply.status == "error" && reply.code == "unsupported_write_type", "\(reply)")
            #expect(reply.response == false, "the requested type is named: \(reply)")
            reply = try await harness.setCommand(C.strapTopic("2a39"), #"{"raw":"01","response":false}"#)
            #expect(reply.code == "unsupported_write_type", "\(reply)")

            // Barrier writes on both devices: nothing refused above reached a peripheral.
            _ = try await harness.setCommand(C.topic(C.echo1, C.writeRequest), "5a")
            _ = try await harness.setCommand(C.strapTopic("2a39"), "01")
            try await harness.waitForLoggedWrite(C.echo1Address, C.writeRequest, "5a")
            try await harness.waitForLoggedWrite(C.strapAddress, C.controlPoint, "01")
            #expect(harness.writeLogEntries.map(\.hex).sorted() == ["01", "5a"], "refused commands were written: \(harness.writeLogEntries)")
        }
    }

    @Test("gatt_error names BlueZ's error: NotPermitted, control point 02 (ATT 0x80), length, read errors via simctl")
    func gattErrors() async throws {
        try await Harness.with(C.options()) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.strap])

            var reply = try await harness.setCommand(C.topic(C.echo1, C.refused), #"{"raw":"01","transaction":1}"#, transaction: 1)
            #expect(reply.status == "error" && reply.code == "gatt_error" && reply.response == true, "\(reply)")
            #expect(reply.errorMessage?.contains("org.bluez.Error.NotPermitted") == true, "\(reply)")
            #expect(reply.errorMessage?.contains("Write not permitted") == true, "\(reply)")

            // The heart rate control point: [01] accepted, [02] ATT 0x80, a wrong length Invalid Length.
            reply = try await harness.setCommand(C.strapTopic("2a39"), "02")
            #expect(reply.code == "gatt_error", "\(reply)")
            #expect(reply.errorMessage?.contains("org.bluez.Error.Failed") == true, "\(reply)")
            #expect(reply.errorMessage?.contains("0x80") == true, "\(reply)")
            reply = try await harness.setCommand(C.strapTopic("2a39"), "0102")
            #expect(reply.code == "gatt_error", "\(reply)")
            #expect(reply.errorMessage?.contains("org.bluez.Error.InvalidArguments") == true, "\(reply)")
            reply = try await harness.setCommand(C.strapTopic("2a39"), "01")
            #expect(reply.status == "ok", "\(reply)")

            // Read errors and exact D-Bus errors injected at run time.
            try await Commands.simctl(harness, "SetCharacteristicError", C.echo1Address, C.writeRequest, "read", "NotPermitted", "")
            reply = try await harness.getCommand(C.topic(C.echo1, C.writeRequest), #"{"transaction":"r"}"#, transaction: "r")
            #expect(reply.status == "error" && reply.op == "read" && reply.code == "gatt_error", "\(reply)")
            #expect(reply.errorMessage?.contains("org.bluez.Error.NotPermitted") == true, "\(reply)")
            #expect(reply.errorMessage?.contains("Read not permitted") == true, "\(reply)")
            try await Commands.simctl(harness, 
                "SetCharacteristicError", C.echo1Address, C.both, "write", "org.bluez.Error.NotAuthorized", "Go away")
            reply = try await harness.setCommand(C.topic(C.echo1, C.both), "0b0b")
            #expect(reply.code == "gatt_error", "\(reply)")
            #expect(reply.errorMessage?.contains("org.bluez.Error.NotAuthorized") == true, "\(reply)")
            #expect(reply.errorMessage?.contains("Go away") == true, "\(reply)")

            // Errors removed: the same commands succeed.
            try await Commands.simctl(harness, "SetCharacteristicError", C.echo1Address, C.writeRequest, "read", "", "")
            reply = try await harness.getCommand(C.topic(C.echo1, C.writeRequest), "")
            #expect(reply.status == "ok" && reply.raw == "00", "\(reply)")
            try await Commands.simctl(harness, "SetCharacteristicError", C.echo1Address, C.both, "write", "", "")
            reply = try await harness.setCommand(C.topic(C.echo1, C.both), "0c0c")
            #expect(reply.status == "ok", "\(reply)")

            try await harness.waitForLoggedWrite(C.echo1Address, C.both, "0c0c")
            let writes = harness.writeLogEntries.map { "\($0.address) \($0.uuid) \($0.type) \($0.hex)" }
            #expect(
                writes == ["\(C.strapAddress) \(C.controlPoint) request 01", "\(C.echo1Address) \(C.both) request 0c0c"],
                "only accepted writes are logged:\n\(writes.joined(separator: "\n"))")
        }
    }

    @Test("timeout: BlueZ does not answer within commands.timeout (a slow write, a delayed read)")
    func timeouts() async throws {
        try await Harness.with(C.options(timeout: "1s")) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.echo2])

            let start = ContinuousClock.now
            var reply = try await harness.setCommand(C.topic(C.echo1, C.slow), #"{"raw":"5104","transaction":"slow"}"#, transaction: "slow")
            let elapsed = ContinuousClock.now - start
            #expect(reply.status == "error" && reply.op == "write" && reply.code == "timeout", "\(reply)")
            #expect(elapsed >= .milliseconds(900) && elapsed < .seconds(10), "answered after \(elapsed)")
            #expect(!harness.writeLogEntries.contains { $0.hex == "5104" }, "the peripheral has not answered yet")

            try await Commands.simctl(harness, "SetCharacteristicDelay", C.echo2Address, C.writeRequest, "read", "5000")
            reply = try await harness.getCommand(C.topic(C.echo2, C.writeRequest), #"{"transaction":"r"}"#, transaction: "r")
            #expect(reply.status == "error" && reply.op == "read" && reply.code == "timeout", "\(reply)")

            // The device's queue goes on: a command to another characteristic of echo1 succeeds.
            reply = try await harness.setCommand(C.topic(C.echo1, C.writeRequest), "600d")
            #expect(reply.status == "ok", "\(reply)")
            try await harness.waitForLoggedWrite(C.echo1Address, C.writeRequest, "600d")
        }
    }

    @Test("not_connected after commands.timeout for a known device out of range; not replayed; waits for a reconnect")
    func notConnected() async throws {
        // 8 s: the strap's read must come back, and the device must reconnect, within one
        // commands.timeout also on a busy machine (both are asserted below).
        try await Harness.with(C.options(timeout: "8s")) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.strap])
            let request = C.topic(C.echo1, C.writeRequest)

            var mark = harness.observer.count
            try await Commands.simctl(harness, "SetInRange", C.echo1Address, "false")
            try await harness.waitFor("ble/\(C.echo1)/availability", after: mark) { $0.payload == "offline" }

            let start = ContinuousClock.now
            mark = harness.observer.count
            try await harness.publish("\(request)/set", #"{"raw":"aa01","transaction":"nc"}"#)
            try await harness.publish("\(request)/get", #"{"transaction":"nc-read"}"#)
            // Another device is served meanwhile: commands to different devices run concurrently.
            let strap = try await harness.getCommand(C.strapTopic("2a38"), #"{"transaction":"strap"}"#, transaction: "strap")
            #expect(strap.status == "ok" && strap.raw == "01", "\(strap)")

            let write = try CommandReply(try await harness.waitFor("\(request)/result", after: mark) { $0.object?["transaction"] as? String == "nc" })
            let elapsed = ContinuousClock.now - start
            #expect(write.status == "error" && write.op == "write" && write.code == "not_connected", "\(write)")
            #expect(elapsed >= .milliseconds(7500), "not_connected only after commands.timeout (8s), got it after \(elapsed)")
            let read = try CommandReply(try await harness.waitFor("\(request)/result", after: mark) { $0.object?["transaction"] as? String == "nc-read" })
            #expect(read.status == "error" && read.op == "read" && read.code == "not_connected", "\(read)")
            #expect(strap.message.index < write.message.index, "the strap's read did not wait for echo1's queue")

            // A command sent while disconnected waits for the device, within its deadline.
            mark = harness.observer.count
            try await harness.publish("\(request)/set", #"{"raw":"aa02","transaction":"wait"}"#)
            try await Commands.simctl(harness, "SetInRange", C.echo1Address, "true")
            let waited = try CommandReply(try await harness.waitFor("\(request)/result", after: mark) { $0.object?["transaction"] as? String == "wait" })
            #expect(waited.status == "ok" && waited.response == true, "\(waited)")
            try await harness.waitForLoggedWrite(C.echo1Address, C.writeRequest, "aa02")
            let writes = harness.writeLogEntries.filter { $0.address == C.echo1Address }.map(\.hex)
            #expect(writes == ["aa02"], "the failed command was replayed after the reconnect: \(writes)")
        }
    }

    // MARK: - MQTT v5

    @Test("MQTT v5: a command's Response Topic gets its result with the Correlation Data")
    func responseTopic() async throws {
        try await Harness.with(C.options()) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.strap])
            let subscriber = try await CommandV5Subscriber.start(harness, filters: ["replies/#"])
            do {
                try await checkResponseTopics(harness, subscriber)
            } catch {
                await subscriber.stop()
                throw error
            }
            await subscriber.stop()
        }
    }

    private func checkResponseTopics(_ harness: Harness, _ subscriber: CommandV5Subscriber) async throws {
        let request = C.topic(C.echo1, C.writeRequest)

        let cases: [(topic: String, payload: String, reply: String, correlation: String?, status: String, code: String?)] = [
            ("\(request)/set", #"{"raw":"0102","transaction":5}"#, "replies/a", "corr-a", "ok", nil),
            ("\(C.strapTopic("2a38"))/get", "", "replies/b", "corr-b 42", "ok", nil),
            ("\(request)/set", "zz", "replies/c", "corr-c", "error", "invalid_payload"),
            ("ble/aabbccddeeff/180d/2a39/set", "01", "replies/d", "corr-d", "error", "unknown_characteristic"),
            ("\(C.strapTopic("2a39"))/set", "02", "replies/e", nil, "error", "gatt_error"),
        ]
        for (topic, payload, replyTopic, correlation, status, code) in cases {
            let mark = harness.observer.count
            try await harness.publishWithResponseTopic(topic, payload, responseTopic: replyTopic, correlationData: correlation)
            let message = try await subscriber.waitFor("a result on \(replyTopic)", context: harness.context) { $0.topic == replyTopic }
            #expect(message.correlationData == (correlation ?? ""), "\(message)")
            let object = try #require(JSON.object(message.payload), "\(message)")
            #expect(object["status"] as? String == status, "\(message)")
            #expect((object["error"] as? [String: Any])?["code"] as? String == code, "\(message)")
            // The same result is also published on the characteristic's result topic.
            let resultTopic = String(topic.dropLast(4)) + "/result"
            let result = try await harness.waitFor(resultTopic, after: mark)
            #expect(result.payload == message.payload, "result topic: \(result), response topic: \(message)")
        }
        #expect(JSON.integer(JSON.object(subscriber.messages[0].payload)?["transaction"]) == 5)

        // A command without a Response Topic (MQTT 3.1.1 here) is answered on the result topic
        // only; each command above got exactly one reply.
        _ = try await harness.setCommand(request, "0304")
        #expect(subscriber.messages.count == cases.count, "\(subscriber.messages)")
    }
}
