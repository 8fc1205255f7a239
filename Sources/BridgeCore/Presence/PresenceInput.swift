/// What ``PresenceCore`` is told. Trackers are named by their configured `name` (what ``TrackerMatcher`` returns);
/// a name that is not configured is ignored.
public enum PresenceInput: Sendable, Hashable {
    /// The broker connection came up (also after a reconnect): every tracker this bridge publishes whose state is
    /// known is published at once (the retained payload may be gone with a broker that restarted), then as usual.
    case brokerConnected
    /// The broker connection is lost: nothing is published until ``brokerConnected``; the trackers' states go on.
    case brokerDisconnected
    /// This bridge heard `tracker` (an advertisement, or BlueZ's RSSI update of its device) at `rssi` dBm; `nil` or
    /// 127 when BlueZ has no valid strength (it still counts as heard).
    case heard(tracker: String, rssi: Int?)
    /// Cluster (SPEC §10): another bridge's trackers, from its `sightings` (every tracker it names, with its RSSI
    /// there). Replaces that bridge's previous report: a tracker it no longer names is no longer heard by it.
    case sightings(bridge: String, trackers: [String: RemoteSighting])
    /// Cluster: another bridge is gone (its `state` went `offline`, or its sightings were emptied): its reports no
    /// longer count.
    case bridgeGone(bridge: String)
    /// Cluster: whether this bridge owns `tracker` (``OwnershipCore`` with ``ClusterService/listen``): only the owner
    /// publishes (rule 5). Gaining a tracker publishes its state at once when it is known.
    case ownership(tracker: String, owned: Bool)
    /// Time passed (at or after ``PresenceCore/nextDeadline()``).
    case tick
}

/// Another bridge's report of one tracker (cluster).
public struct RemoteSighting: Sendable, Hashable {
    /// Its RSSI there (dBm), `nil` when unknown.
    public var rssi: Int?
    /// How long ago that bridge last heard the tracker, when its report says so; `.zero` when it does not (a
    /// `sightings` entry only says "heard in the last 60 s": the tracker is then taken as heard when the report
    /// arrives, which delays `not_home` by up to that minute when only other bridges heard it last).
    public var heardAgo: Duration

    /// Creates a report.
    public init(rssi: Int?, heardAgo: Duration = .zero) {
        self.rssi = rssi
        self.heardAgo = heardAgo
    }
}

/// One publication ``PresenceCore`` decided: the retained payload for `{base}/{tracker}/presence`
/// (``TopicMapper/presence(tracker:)``).
public struct PresencePublication: Sendable, Hashable {
    /// The tracker's name (its topic segment).
    public var tracker: String
    /// The payload.
    public var payload: PresencePayload

    /// Creates a publication.
    public init(tracker: String, payload: PresencePayload) {
        self.tracker = tracker
        self.payload = payload
    }
}

/// The timings of ``PresenceCore``; the defaults are SPEC §12's and §10's.
public struct PresenceSettings: Sendable, Hashable {
    /// This bridge's id: `bridge` in the payloads.
    public var bridgeID: String
    /// Whether the cluster is on: then only trackers this bridge owns are published (``PresenceInput/ownership(tracker:owned:)``),
    /// and the room is chosen among the bridges that hear the tracker.
    public var cluster: Bool
    /// The room's hysteresis (`cluster.switch_margin`, `cluster.switch_after`), as for device ownership.
    public var switchRule: SwitchRule
    /// The median's window.
    public var rssiWindow: Duration
    /// RSSI moves publish at most this often (SPEC: every 10 s) ...
    public var rssiInterval: Duration
    /// ... and only when the smoothed RSSI moved by this much since the last publication (SPEC: 3 dB).
    public var rssiStep: Int
    /// How long a bridge's reading counts for the room choice: this bridge's last smoothed RSSI after it was last
    /// heard (as `sightings` do: 60 s).
    public var readingLifetime: Duration
    /// How long another bridge's report counts after it arrived (three sightings intervals, as
    /// ``ClusterSettings/sightingsStaleAfter``).
    public var remoteLifetime: Duration

    /// Creates settings.
    public init(
        bridgeID: String, cluster: Bool = false, switchRule: SwitchRule = SwitchRule(), rssiWindow: Duration = .seconds(5),
        rssiInterval: Duration = .seconds(10), rssiStep: Int = 3, readingLifetime: Duration = .seconds(60),
        remoteLifetime: Duration = .seconds(15)
    ) {
        self.bridgeID = bridgeID
        self.cluster = cluster
        self.switchRule = switchRule
        self.rssiWindow = rssiWindow
        self.rssiInterval = rssiInterval
        self.rssiStep = rssiStep
        self.readingLifetime = readingLifetime
        self.remoteLifetime = remoteLifetime
    }

    /// The settings of a configuration: `bridge.id`, `cluster.enabled` and its switch rule.
    public init(config: BridgeConfig) {
        self.init(bridgeID: config.bridgeID, cluster: config.cluster.enabled, switchRule: config.cluster.switchRule)
    }
}
