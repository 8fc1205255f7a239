import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// A device profile (SPEC §15) run by the runtime over the fakes: the session's executor performs the profile's calls,
/// publishes `{base}/{device}/values`, routes decodes and arms waits in the router, and answers named commands.
@Suite struct ProfileRuntimeTests {
    static let address = "C8:12:34:56:78:9A"
    static let yaml = RuntimeHarness.base + """

        bluetooth: { services: ["ffe0"] }
        devices:
          - match: { address: "C8:12:34:56:78:9A" }
            name: thing
        """

    /// Connection steps: subscribe to ffe2 with a decode, write the time to ffe1, read ffe2 decoded; `press` writes
    /// 570100 and expects ffe2's answer (01 ok, 05 wrong_password).
    static func profile() throws -> DeviceProfileBinding {
        let ffe1 = BluetoothUUID("ffe1")!, ffe2 = BluetoothUUID("ffe2")!
        let data = ProfileDecode.structure(
            try ProfileStruct(format: "<hB", fields: [.init("temperature", try ProfileFieldTransform.parse("/10")), .init("moisture")]))
        let answers = try ProfileFirstByte<String>([(key: "01", target: "ok"), (key: "05", target: "wrong_password")])
        return DeviceProfileBinding(profile: DeviceProfile(
            id: "thing", steps: [
                ProfileStep(.subscribe(characteristic: ffe2, decode: "data")),
                ProfileStep(.write(characteristic: ffe1, value: try ProfileTemplate("a0 {unix|u32le}"), response: nil)),
                ProfileStep(.read(characteristic: ffe2, decode: "data")),
            ],
            decodes: ["data": data],
            commands: [ProfileCommand(
                name: "press", steps: [ProfileStep(.write(characteristic: ffe1, value: try ProfileTemplate("570100"), response: nil))],
                expect: ProfileExpect(characteristic: ffe2, answers: answers))]))
    }

    /// The device: ffe1 takes writes, ffe2 reads e8 00 2a and notifies; the two characteristics' paths.
    static func addThing(_ h: RuntimeHarness) -> (ffe1: String, ffe2: String) {
        let dev = h.central.addDevice(
            address, name: "Thing", services: ["ffe0": [("ffe1", ["write"], []), ("ffe2", ["read", "notify"], [0xe8, 0x00, 0x2a])]])
        return (h.central.characteristicPath(device: dev, "ffe1"), h.central.characteristicPath(device: dev, "ffe2"))
    }

    static func harness() throws -> RuntimeHarness {
        let binding = try profile()
        return try RuntimeHarness(yaml) { config in config.devices[0].profile = binding }
    }

    @Test("the connection steps run after the setup: the write carries the wall time, the read's values and every notification's are published on the values topic")
    func connectionSteps() async throws {
        let h = try Self.harness()
        let (ffe1, ffe2) = Self.addThing(h)
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/thing/availability") == "online" }
            #expect(h.broker.texts("ble/thing/values") == [#"{"profile":"thing","values":{"temperature":23.2,"moisture":42}}"#])
            let write = try #require(h.central.calls("WriteValue").first)
            #expect(write.path == ffe1)
            let unix = UInt32(truncatingIfNeeded: h.clock.unixTime)
            #expect(write.bytes == [0xa0, UInt8(unix & 0xff), UInt8(unix >> 8 & 0xff), UInt8(unix >> 16 & 0xff), UInt8(unix >> 24)])
            h.central.notify(ffe2, [0x10, 0x00, 0x05])
            try await h.eventually("the decoded notification") { h.broker.texts("ble/thing/values").count == 2 }
            #expect(h.broker.last("ble/thing/values") == #"{"profile":"thing","values":{"temperature":1.6,"moisture":5}}"#)
            #expect(h.broker.last("ble/thing/ffe0/ffe2")?.contains(#""raw":"100005""#) == true, "the characteristic's own topic stays")
        }
        let order = h.central.calls.map(\.method).filter { ["StartNotify", "AcquireNotify", "WriteValue", "ReadValue"].contains($0) }
        #expect(order == ["AcquireNotify", "StartNotify", "WriteValue", "ReadValue"], "AcquireNotify refused by the fake: \(order)")
    }

    @Test("a named command: the answer that comes before the write's reply decides its result; a wrong one is the error code")
    func command() async throws {
        let h = try Self.harness()
        let (ffe1, ffe2) = Self.addThing(h)
        try await h.run {
            try await h.eventually("online") { h.broker.last("ble/thing/availability") == "online" }
            h.central.hold("WriteValue", ffe1)
            h.command("ble/thing/command/press/set", #"{"transaction": 5}"#)
            try await h.eventually("the press written") { h.central.calls("WriteValue").count == 2 }
            // The device answers before the write's reply: taken by the command, not decoded as values.
            h.central.notify(ffe2, [0x01])
            try await h.settle()
            h.central.release("WriteValue", ffe1)
            try await h.eventually("the result") { h.broker.last("ble/thing/command/press/result") != nil }
            #expect(h.broker.last("ble/thing/command/press/result") == #"{"status":"ok","op":"command","transaction":5}"#)
            #expect(h.broker.texts("ble/thing/values").count == 1, "the answer is not published as values")
            h.command("ble/thing/command/press/set", "")
            try await h.eventually("the second press written") { h.central.calls("WriteValue").count == 3 }
            h.central.notify(ffe2, [0x05])
            try await h.eventually("the second result") { h.broker.texts("ble/thing/command/press/result").count == 2 }
            #expect(h.broker.last("ble/thing/command/press/result")?.contains(#""code":"wrong_password""#) == true)
            h.command("ble/thing/command/nope/set", "")
            try await h.eventually("unknown") { h.broker.last("ble/thing/command/nope/result") != nil }
            #expect(h.broker.last("ble/thing/command/nope/result")?.contains(#""code":"unknown_command""#) == true)
        }
    }
}
