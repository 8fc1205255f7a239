import BridgeCore
import RuntimeCore

extension ClusterCore {
    /// The health object's `cluster` part.
    var health: HealthSnapshot.Cluster {
        var owners: [String: String?] = [:]
        for device in ownership.wanted.keys { owners[device] = ownership.effectiveOwner(of: device)?.bridge }
        var bridges = ownership.states.compactMapValues { $0 }
        bridges[bridgeID] = ownership.brokerUpSince != nil
        return HealthSnapshot.Cluster(
            bridge: bridgeID, owners: owners, serving: ownership.wanted.keys.filter(ownership.isServing).sorted(),
            bridges: bridges)
    }
}
