import Testing

@testable import BridgeCore

/// SPEC §10 rule 7 on the model broker of ``ClusterModel``: the owner of the devices is cut off from the broker
/// while its radio works; the broker publishes its will at exactly 1.5 × keepalive. Noticing within a keepalive
/// (the probe), it has let go before anyone connects; noticing as late as libmosquitto alone does (about 2.5 ×), two
/// bridges hold a device at once: the check bites.
@Suite struct ClusterPartitionSimulationTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func cutOffOwnerLetsGoBeforeTheWill(seed: UInt64) throws {
        let (model, violation, cut, victim) = try run(seed: seed, noticeAfter: ClusterModel.keepAlive)
        #expect(violation == nil, "seed \(seed): \(violation ?? "")")
        // Failover: every device the victim held is served elsewhere within 10 s of the will (cut + 1.5 × keepalive).
        for device in ClusterModel.devices.keys.sorted() {
            let holders = model.holders(of: device)
            #expect(holders.count == 1 && holders != [victim], "seed \(seed): \(device) held by \(holders)")
        }
        // Healed (at most 20 s after the cut) and settled: the victim took nothing back (equal RSSI, no handover).
        #expect(model.cutOff.isEmpty && model.online.contains(victim))
        #expect(model.now > cut + 40)
    }

    @Test("noticing at 2.5 × keepalive (libmosquitto alone): two links at once")
    func lateNoticeMakesTwoLinks() throws {
        let (_, violation, _, _) = try run(seed: 1, noticeAfter: 2.5 * ClusterModel.keepAlive)
        #expect(violation != nil)
    }

    /// Three bridges hearing every device alike settle; the one holding d1 is cut off, then healed 15 s later.
    /// Returns the model 45 s after the cut, the first violation of rule 1, the cut's time and the victim.
    private func run(seed: UInt64, noticeAfter: Double) throws -> (ClusterModel, String?, Double, String) {
        var model = ClusterModel(seed: seed)
        model.noticeAfter = noticeAfter
        for id in ClusterModel.ids { for device in ClusterModel.devices.keys { model.rssi[id]![device] = -60 } }
        for _ in 0..<600 { model.step() }  // 30 s: claimed and connected
        let victim = try #require(model.holders(of: "d1").first)
        let cut = model.now
        model.partition(victim, healAfter: 15)
        var violation: String?
        var servedAgainAt: [String: Double] = [:]
        let held = ClusterModel.devices.keys.filter { model.holders(of: $0) == [victim] }
        for _ in 0..<900 {  // 45 s
            model.step()
            if violation == nil, let found = model.violation() { violation = "at \(model.now - cut) s after the cut: \(found)" }
            for device in held where servedAgainAt[device] == nil {
                if let holder = model.holders(of: device).first, holder != victim { servedAgainAt[device] = model.now }
            }
        }
        let will = cut + 1.5 * ClusterModel.keepAlive
        for device in held {
            let at = try #require(servedAgainAt[device], "\(device) was never served again")
            #expect(at - will <= 10, "\(device) served again \(at - will) s after the will")
        }
        return (model, violation, cut, victim)
    }
}
