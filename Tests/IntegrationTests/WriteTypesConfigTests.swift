import Testing

/// `write_types` in `bridge.yaml` overrides the write types a characteristic's Flags allow, for
/// peripherals whose Flags are wrong (BlueZ sends a `type: command` write whatever they say).
@Suite(.serialized) struct WriteTypesConfigTests {
    typealias C = Commands

    /// The command tests' configuration plus `write_types` on the echo devices' write-only characteristic.
    static func options() -> HarnessOptions {
        var options = C.options()
        options.config = { port in
            """
            mqtt:
              url: mqtt://127.0.0.1:\(port)
              client_id: bridge-under-test
            bluetooth:
              adapter: hci0
              services: ["180d", "\(C.service)"]
            reconnect: { initial_delay: 200ms, max_delay: 500ms }
            commands: { timeout: 3s }
            devices:
              - match: { name: "Cmd Echo*" }
                characteristics:
                  - uuid: "\(C.writeRequest)"
                    write_types: [request, command]
                  - uuid: "\(C.writeCommand)"
                    write_types: [command]

            """
        }
        return options
    }

    @Test("write_types: [request, command] lets response:false reach a write-only characteristic; the Flags rule the rest")
    func configuredWriteTypes() async throws {
        try await Harness.with(Self.options()) { harness in
            try await harness.waitForCommandDevices([C.echo1, C.strap])
            let request = C.topic(C.echo1, C.writeRequest)

            var reply = try await harness.setCommand(request, #"{"raw":"0202","response":false,"transaction":"c"}"#, transaction: "c")
            #expect(reply.status == "ok" && reply.response == false, "configured command write: \(reply)")
            reply = try await harness.setCommand(request, "0303")
            #expect(reply.status == "ok" && reply.response == true, "still with response by default: \(reply)")
            // Configured as command-only: "response": true is refused although nothing in the Flags changed.
            reply = try await harness.setCommand(
                C.topic(C.echo1, C.writeCommand), #"{"raw":"0404","response":true}"#)
            #expect(reply.status == "error" && reply.code == "unsupported_write_type", "\(reply)")
            // Not configured: the strap's control point has only `write`.
            reply = try await harness.setCommand(C.strapTopic("2a39"), #"{"raw":"01","response":false}"#)
            #expect(reply.status == "error" && reply.code == "unsupported_write_type", "\(reply)")

            _ = try await harness.setCommand(request, "ff")
            try await harness.waitForLoggedWrite(C.echo1Address, C.writeRequest, "ff")
            let writes = harness.writeLogEntries.map { "\($0.address) \($0.uuid) \($0.type) \($0.hex)" }
            #expect(
                writes == [
                    "\(C.echo1Address) \(C.writeRequest) command 0202",
                    "\(C.echo1Address) \(C.writeRequest) request 0303",
                    "\(C.echo1Address) \(C.writeRequest) request ff",
                ], "the write log:\n\(writes.joined(separator: "\n"))")
        }
    }
}
