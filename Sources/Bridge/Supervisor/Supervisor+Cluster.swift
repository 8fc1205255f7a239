import BlueZ
import BridgeCore
import RuntimeCore

/// Executing the cluster's decisions (SPEC §10), which ``SupervisorCore`` makes with the rest: publishing the
/// cluster topics, handing command intake its roles, and telling the presence router and Home Assistant which
/// trackers this bridge publishes. Without a cluster nothing here runs.
extension Supervisor {
    /// Performs one of the core's cluster actions.
    func performCluster(_ action: SupervisorCore.Action) {
        switch action {
        case .publishRetained(let topic, let payload):
            ctx.broker.publish(topic: topic, payload: payload, qos: 1, retain: true)
        case .subscribeClusterTopics:
            for filter in ctx.topics.cluster?.filters ?? [] { ctx.broker.subscribe(filter, qos: 1) }
        case .commandRoles(let roles):
            ctx.clusterRoles?.update(roles)
        case .trackerOwnership(let name, let owned):
            ctx.presence?.step(.ownership(tracker: name, owned: owned))
            if owned {
                homeAssistant.trackersServedElsewhere.remove(name)
                if config.homeAssistant.discovery, let tracker = config.trackers.first(where: { $0.name == name }) {
                    homeAssistant.publish(tracker: tracker)
                }
            } else {
                homeAssistant.trackersServedElsewhere.insert(name)
            }
        case .trackerSightings(let bridge, let heard):
            ctx.presence?.step(.sightings(bridge: bridge, trackers: heard))
        case .bridgeGone(let bridge):
            ctx.presence?.step(.bridgeGone(bridge: bridge))
        default:
            break
        }
    }

    /// With a cluster: what the advertisement router last saw of each advertisement device (the cluster's
    /// sightings carry them; their advertisements take the values' path and never reach the supervisor).
    func advertisers() -> [String: SupervisorCore.Advertiser] {
        guard core.cluster != nil else { return [:] }
        var out: [String: SupervisorCore.Advertiser] = [:]
        for (path, record) in core.devices {
            guard case .advertisement = record.policy, let last = ctx.advertisements.seen(path: path).last,
                  let rssi = ctx.advertisements.rssi(path: path)
            else { continue }
            out[path] = SupervisorCore.Advertiser(last: last, rssi: rssi)
        }
        return out
    }
}
