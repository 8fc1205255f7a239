import Foundation
import Testing

/// Writes through `/set` to the echo device, which notifies back what it receives.
@Suite(.timeLimit(.minutes(2)))
struct WriteTests {
    static let base = "ble/\(Demo.echo)/\(Demo.echoService)"

    @Test("write with response: result ok, echoed, seen by the peripheral")
    func writeWithResponse() async throws {
        try await Harness.with { harness in
            try await harness.waitFor("ble/\(Demo.echo)/availability") { $0.payload == "online" }
            let mark = harness.observer.count
            try await harness.publish("\(Self.base)/\(Demo.echoWrite)/set", #"{"raw": "0102", "transaction": "t-1"}"#)

            let result = try await harness.waitFor("\(Self.base)/\(Demo.echoWrite)/result", after: mark)
            let object = try #require(result.object, "\(result)")
            #expect(object["status"] as? String == "ok", "\(result)")
            #expect(object["op"] as? String == "write", "\(result)")
            #expect(object["transaction"] as? String == "t-1", "\(result)")
            #expect(JSON.bool(object["response"]) == true, "\(result)")

            let echo = try await harness.waitFor("\(Self.base)/\(Demo.echoNotify)", after: mark) {
                $0.object?["raw"] as? String == "0102"
            }
            #expect(echo.object?["value"] as? String == "0102")
            try await harness.waitForLine(in: harness.writesLogPath, timeout: .seconds(5), "the write") {
                $0.hasSuffix(" \(Demo.echoAddress) \(Demo.echoWrite) request 0 0102")
            }
        }
    }

    @Test("write without response from a bare hex payload: echoed, seen by the peripheral")
    func writeWithoutResponse() async throws {
        try await Harness.with { harness in
            try await harness.waitFor("ble/\(Demo.echo)/availability") { $0.payload == "online" }
            let mark = harness.observer.count
            try await harness.publish("\(Self.base)/\(Demo.echoWriteCommand)/set", "0304")

            try await harness.waitFor("\(Self.base)/\(Demo.echoNotify)", after: mark) {
                $0.object?["raw"] as? String == "0304"
            }
            let result = try await harness.waitFor("\(Self.base)/\(Demo.echoWriteCommand)/result", after: mark)
            #expect(result.object?["status"] as? String == "ok", "\(result)")
            #expect(JSON.bool(result.object?["response"]) == false, "\(result)")
            #expect(result.object?["transaction"] == nil, "no transaction was given: \(result)")
            try await harness.waitForLine(in: harness.writesLogPath, timeout: .seconds(5), "the write") {
                $0.hasSuffix(" \(Demo.echoAddress) \(Demo.echoWriteCommand) command 0 0304")
            }
        }
    }
}
