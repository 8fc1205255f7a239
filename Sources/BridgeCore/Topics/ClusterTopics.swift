/// The topics only a cluster member uses (SPEC §10), from ``TopicMapper/cluster``.
///
/// Its own `state`, `devices`, `health`, `request` and `response` topics are ``TopicMapper``'s usual ones, which
/// move to `{base}/bridges/{id}/…` with the cluster on.
public struct ClusterTopics: Sendable, Hashable {
    /// `mqtt.base_topic`.
    public let baseTopic: String
    /// This bridge's id (`bridge.id`).
    public let bridgeID: String
    /// `{base}/bridges/{id}/sightings`: this bridge's retained sightings.
    public let sightings: String
    /// `{base}/bridges/+/state`: every bridge's state (its own included).
    public let bridgeStateFilter: String
    /// `{base}/bridges/+/sightings`: every bridge's sightings (its own included).
    public let sightingsFilter: String
    /// `{base}/+/owner`: every device's owner claim.
    public let ownerFilter: String
    let prefix: String  // "{base}/"

    /// Creates the topics of bridge `bridgeID` (a valid ``BridgeID``) under `baseTopic`.
    public init(baseTopic: String, bridgeID: String) {
        self.baseTopic = baseTopic
        self.bridgeID = bridgeID
        self.prefix = baseTopic + "/"
        let bridges = "\(baseTopic)/\(TopicMapper.bridgesSegment)"
        self.sightings = "\(bridges)/\(bridgeID)/sightings"
        self.bridgeStateFilter = "\(bridges)/+/state"
        self.sightingsFilter = "\(bridges)/+/sightings"
        self.ownerFilter = "\(baseTopic)/+/owner"
    }

    /// The filters a cluster member subscribes to, besides ``TopicMapper/commandFilters``.
    public var filters: [String] { [bridgeStateFilter, sightingsFilter, ownerFilter] }

    /// `{base}/{device}/owner` (retained ``OwnerPayload``).
    public func owner(device: String) -> String { "\(prefix)\(device)/owner" }

    /// `{base}/bridges/{bridge}/state` of any bridge.
    public func bridgeState(bridge: String) -> String { "\(prefix)\(TopicMapper.bridgesSegment)/\(bridge)/state" }

    /// `{base}/bridges/{bridge}/sightings` of any bridge.
    public func sightings(bridge: String) -> String { "\(prefix)\(TopicMapper.bridgesSegment)/\(bridge)/sightings" }

    /// Parses a topic received through ``filters``: `nil` for anything else, for a bridge id that is not a valid
    /// ``BridgeID``, and for an owner topic whose device segment is reserved (`bridge`, `bridges`) or empty.
    public func parse(_ topic: String) -> ClusterTopic? {
        guard topic.hasPrefix(prefix) else { return nil }
        let levels = topic.utf8.dropFirst(prefix.utf8.count).split(separator: 0x2F, omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        switch levels.count {
        case 2 where levels[1] == "owner":
            let device = levels[0]
            guard TopicMapper.segmentProblem(device) == nil, !TopicMapper.reservedSegments.contains(device) else {
                return nil
            }
            return .owner(device: device)
        case 3 where levels[0] == TopicMapper.bridgesSegment && BridgeID.isValid(levels[1]):
            switch levels[2] {
            case "state": return .bridgeState(bridge: levels[1])
            case "sightings": return .sightings(bridge: levels[1])
            default: return nil
            }
        default:
            return nil
        }
    }
}

/// A cluster topic a bridge received, as parsed by ``ClusterTopics/parse(_:)``.
public enum ClusterTopic: Sendable, Hashable {
    /// `{base}/bridges/{bridge}/state`.
    case bridgeState(bridge: String)
    /// `{base}/bridges/{bridge}/sightings`.
    case sightings(bridge: String)
    /// `{base}/{device}/owner`.
    case owner(device: String)
}
