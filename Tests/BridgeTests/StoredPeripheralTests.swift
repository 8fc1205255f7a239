import BlueZ
import Foundation
import Testing

@testable import Bridge

/// SPEC §5 over the fakes: stored peripherals are connected before the scan starts; the scan
/// waits for their first `Connect`, but not longer than the head start.
@Suite struct StoredPeripheralTests {
    static let stored = "E4:5F:01:AB:CD:EF"
    /// Configured, never present: the scan is needed while it is missing.
    static let missing = "E4:5F:01:00:00:01"

    /// A harness whose state file lists ``stored`` (BlueZ knows its object) and whose config also
    /// wants ``missing``.
    static func harness(_ dir: String) throws -> RuntimeHarness {
        let state = "\(dir)/peripherals.json"
        try #"{"peripherals":[{"address":"\#(stored)","address_type":"public"}]}"#
            .write(toFile: state, atomically: true, encoding: .utf8)
        let h = try RuntimeHarness(RuntimeHarness.base + """

            state_file: \(state)
            devices:
              - match: { address: "\(missing)" }
                name: absent
            """)
        h.central.addDevice(stored, name: "Thermo", services: ["180f": [("2a19", ["read", "notify"], [0x50])]])
        return h
    }

    static func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("stored-\(UInt32.random(in: 0...UInt32.max))").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    @Test("the scan starts only after the stored peripheral's Connect returned")
    func scanAfterConnect() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let h = try Self.harness(dir)
        let device = FakeCentral.adapter + "/dev_E4_5F_01_AB_CD_EF"
        h.central.hold("Connect", device)
        try await h.run {
            try await h.eventually("the stored peripheral's Connect") { !h.central.calls("Connect").isEmpty }
            try await h.advance(.milliseconds(1500))
            #expect(h.central.calls("StartDiscovery").isEmpty, "the scan started while Connect was pending")
            h.central.release("Connect", device)
            try await h.eventually("the scan") { !h.central.calls("StartDiscovery").isEmpty }
        }
        let names = h.central.calls.map(\.method).filter { $0 == "Connect" || $0 == "StartDiscovery" }
        #expect(names.first == "Connect", "\(names)")
    }

    @Test("a stored peripheral whose Connect hangs delays the scan by the head start only")
    func scanAfterHeadStart() async throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let h = try Self.harness(dir)
        let device = FakeCentral.adapter + "/dev_E4_5F_01_AB_CD_EF"
        h.central.hold("Connect", device)
        try await h.run {
            try await h.eventually("the stored peripheral's Connect") { !h.central.calls("Connect").isEmpty }
            try await h.eventually("the scan") { !h.central.calls("StartDiscovery").isEmpty }
            let connect = h.central.calls("Connect")[0].at
            let scan = h.central.calls("StartDiscovery")[0].at
            let gap = connect.duration(to: scan)
            #expect(gap == .seconds(2), "scan \(gap) after the Connect")
            h.central.release("Connect", device)
        }
    }
}
