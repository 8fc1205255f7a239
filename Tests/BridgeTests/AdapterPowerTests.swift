import BlueZ
import BridgeCore
import Testing

@testable import Bridge

/// Powering the adapter on through the ``BluetoothCentral`` seam's typed `setPowered`.
@Suite struct AdapterPowerTests {
    @Test("an unpowered adapter is powered on (Powered = true on the configured adapter), then the scan starts")
    func unpoweredAdapterIsPoweredOn() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["180f"] }
            """)
        h.central.setProperties(FakeCentral.adapter, BlueZ.adapter, ["Powered": .bool(false)])
        try await h.run {
            try await h.eventually("discovery") { !h.central.calls("StartDiscovery").isEmpty }
        }
        let sets = h.central.calls("Set")
        #expect(sets.map(\.path) == [FakeCentral.adapter], "\(sets)")
        #expect(sets.first?.bytes == [1], "Powered must be set to true: \(sets)")
    }

    @Test("a powered adapter is left alone")
    func poweredAdapterIsLeftAlone() async throws {
        let h = try RuntimeHarness(RuntimeHarness.base + """

            bluetooth: { services: ["180f"] }
            """)
        try await h.run {
            try await h.eventually("discovery") { !h.central.calls("StartDiscovery").isEmpty }
        }
        #expect(h.central.calls("Set").isEmpty)
    }
}
