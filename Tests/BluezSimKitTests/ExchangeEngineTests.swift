import BridgeBase
import DBusKit
import Foundation
import Testing

@testable import BluezSimKit

/// How the simulator runs `exchanges`: a rule's error refuses the write (and drops a command) while its
/// other effects run, a write no rule matches behaves as before, and the write and notification logs
/// record exchanges as they record other writes and notifications.
@Suite struct ExchangeEngineTests {
    static let address = "C8:12:34:56:78:9A"
    static let scenario = """
        settings: { connect_delay: 10ms, resolve_delay: 50ms, resolve_delay_cached: 20ms, gatt_export_time: 20ms }
        devices:
          - address: "C8:12:34:56:78:9A"
            known: true
            services:
              - uuid: "fe50"
                characteristics:
                  - { uuid: "fe51", flags: [read, write, write-without-response], value: "00" }
                  - { uuid: "fe52", flags: [read, notify], value: "00" }
            exchanges:
              - when: { write: { characteristic: "fe51", value: "ff" } }
                then:
                  - notify: { characteristic: "fe52", value: "a5" }
                  - error: 0x80
              - when: { write: { characteristic: "fe51", value: "01" } }
                then: [{ notify: { characteristic: "fe52", value: "5a" } }]
        """

    @Test func anErrorRefusesTheWriteAndTheLogsRecordTheExchange() async throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("simexchange-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let writeLog = try EventLog(path: dir + "/writes", flushEachLine: true)
        let notifyLog = try EventLog(path: dir + "/notifications", flushEachLine: true)
        try await SimHarness.run(Self.scenario, notifyLog: notifyLog, writeLog: writeLog) { h in
            try await h.connect(Self.address)
            let fe51 = try await h.characteristicPath(Self.address, "fe51")
            let fe52 = try await h.characteristicPath(Self.address, "fe52")
            let recorder = try await h.subscribe(fe52)
            await #expect(throws: BluezError.att(0x80)) { try await h.write(fe51, "ff") }
            #expect(try await h.read(fe51) == "00")  // refused: not stored
            try await h.write(fe51, "ff", type: "command")  // a command has no response: dropped silently
            #expect(try await h.read(fe51) == "00")
            try await h.write(fe51, "02")  // no rule: stored, nothing notified
            #expect(try await h.read(fe51) == "02")
            try await h.write(fe51, "01")
            try await recorder.wait(for: "Value", .bytes([0x5a]))
            #expect(recorder.values("Value") == [.bytes([0xa5]), .bytes([0xa5]), .bytes([0x5a])])
            #expect(try await h.read(fe51) == "01")
            #expect(await h.counter(Self.address, "write_failures") == 2)
        }
        let fe51 = "0000fe51-0000-1000-8000-00805f9b34fb"
        let fe52 = "0000fe52-0000-1000-8000-00805f9b34fb"
        let writes = try String(contentsOfFile: dir + "/writes", encoding: .utf8).split(separator: "\n")
            .map { $0.split(separator: " ").dropFirst().joined(separator: " ") }
        #expect(writes == ["\(Self.address) \(fe51) request 0 02", "\(Self.address) \(fe51) request 0 01"])
        let notifications = try String(contentsOfFile: dir + "/notifications", encoding: .utf8).split(separator: "\n")
            .map { $0.split(separator: " ").dropFirst().joined(separator: " ") }
        #expect(notifications == ["\(Self.address) \(fe52) a5", "\(Self.address) \(fe52) a5", "\(Self.address) \(fe52) 5a"])
    }
}
