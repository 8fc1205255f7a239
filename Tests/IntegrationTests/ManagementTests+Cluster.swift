import Foundation
import Testing

/// SPEC §14 with the cluster on (§10): a device added through one bridge is served by the cluster, once.
extension ManagementTests {
    /// ``Cluster/config(switchMargin:switchAfter:)`` without tick3 in `devices`: it is added at run time.
    static func clusterOptions() -> ClusterOptions {
        let config = Cluster.config()
        return ClusterOptions(
            nodes: Cluster.hosts,
            config: { id, port in
                config(id, port).split(separator: "\n", omittingEmptySubsequences: false)
                    .filter { !$0.contains(Cluster.tick3.address) }.joined(separator: "\n")
            })
    }

    @Test("cluster: tick3 added through beta (which hears it worse) is served once (one owner, one link, each value published once), owned by alpha, which hears it best")
    func clusterAdd() async throws {
        try await ClusterHarness.with(Self.clusterOptions()) { cluster in
            for node in cluster.nodes {
                try await cluster.waitFor("ble/bridges/\(node.id)/state") { $0.payload == "online" }
            }
            for device in [Cluster.tick1, Cluster.tick2] {
                try await cluster.waitFor("ble/\(device.segment)/availability") { $0.payload == "online" }
            }
            #expect(cluster.observer.messages("ble/tick3/#").isEmpty, "tick3 is served before it was added")

            let mark = cluster.observer.count
            let entry: [String: Any] = ["name": "tick3", "match": ["address": Cluster.tick3.address]]
            let (reply, transaction) = try await cluster.request("device/add", entry, via: "ble/bridges/beta", timeout: .seconds(20))
            let data = Management.expectOK(reply, "device/add through beta", transaction: transaction)
            #expect(data["device"] as? String == "tick3", "\(reply)")
            let stored = try await cluster.retained("ble/config/devices/tick3")
            #expect(Management.isEntry(stored.payload, name: "tick3", address: Cluster.tick3.address), "\(stored)")

            // Rule 2: the bridge that hears it best claims it (alpha at -52 dBm, beta at -82), whoever took the request.
            let claim = try await cluster.waitFor("ble/tick3/owner", after: mark)
            #expect(
                claim.object?["bridge"] as? String == "alpha",
                "rule 2: tick3 is claimed by the bridge whose sightings hear it best (alpha -52 dBm, beta -82 dBm); the first claim: \(claim)")
            // Owned, connected and publishing, like the devices of bridge.yaml.
            let owners = try await cluster.waitForSettled()
            let owner = try #require(owners["tick3"], "\(owners)")
            #expect(owner == "alpha", "tick3's owner is \(owner), not alpha, which hears it best")
            let claims = cluster.observer.messages("ble/tick3/owner").filter { $0.index >= mark }
            #expect(
                Set(claims.compactMap { $0.object?["bridge"] as? String }) == [owner],
                "tick3 claimed by more than one bridge: \(claims.map(\.description))")
            let retained = try await cluster.retainedOwners()
            #expect(retained["ble/tick3/owner"]?.object?["bridge"] as? String == owner, "\(retained.values)")

            // Values once: 3 s of the counter (30 values), none twice, no more than the simulator notifies.
            let valuesMark = cluster.observer.count
            let since = ClusterHarness.now
            let values = try await cluster.waitForValues(Cluster.tick3, count: 3 * Cluster.rate, after: valuesMark)
            let raws = values.compactMap { $0.object?["raw"] as? String }
            let repeated = Dictionary(grouping: raws, by: { $0 }).filter { $0.value.count > 1 }.keys.sorted()
            #expect(repeated.isEmpty, "tick3's counter values published twice: \(repeated)")
            ClusterTests.expectRate(cluster, Cluster.valueTopic(Cluster.tick3), since: since, atMost: Double(Cluster.rate))

            // One link in the simulators, the owner's: connected once, never tried by the other bridge.
            try await cluster.expectOneLinkEach(owners: owners)
            let stats = try await cluster.stats()
            let other = owner == "alpha" ? "beta" : "alpha"
            #expect(stats[owner]?.connects(Cluster.tick3.address) == 1, "\(stats.mapValues(\.clusterSummary))")
            #expect(stats[other]?.connectAttempts(Cluster.tick3.address) == 0, "\(other) tried tick3 too: \(stats.mapValues(\.clusterSummary))")
        }
    }
}
