/// What ``PresenceCore`` knows of one tracker: when and how strongly it was heard, here and by the other bridges,
/// its room and what was last published.
public struct TrackerPresence<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Another bridge's report, as it arrived.
    public struct Remote: Sendable, Hashable {
        /// Its RSSI there (valid readings only), `nil` when unknown.
        public var rssi: Int?
        /// When the report arrived.
        public var receivedAt: Instant
    }

    /// The tracker's name (its topic segment).
    public let name: String
    /// `away_after`.
    public let awayAfter: Duration
    /// `home` / `not_home`; `nil` until the first advertisement or `away_after` after the start.
    public internal(set) var state: PresencePayload.State?
    /// The last time any bridge heard it (this one, or another by its report).
    public internal(set) var lastHeard: Instant?
    /// The last time this bridge heard it.
    public internal(set) var lastHeardHere: Instant?
    /// `last_seen`: the Unix seconds of ``lastHeard``.
    public internal(set) var lastSeen: Int64?
    /// This bridge's readings, smoothed.
    public internal(set) var window: RSSIWindow<Instant>
    /// The other bridges' reports, by bridge id (only fresh ones: dropped ``PresenceSettings/remoteLifetime`` after
    /// they arrived).
    public internal(set) var remote: [String: Remote] = [:]
    /// The room choice among the bridges that hear it (the switch rule of device ownership).
    public internal(set) var roomChoice: AdapterChoice<Instant>
    /// The room: the bridge that hears it best, with hysteresis; the last one that did once none does.
    public internal(set) var room: String?
    /// Whether this bridge publishes it (always without a cluster).
    public internal(set) var owned: Bool
    /// The last payload published and when; `nil` before the first since the broker came up or the tracker was
    /// gained.
    public internal(set) var lastPublished: (payload: PresencePayload, at: Instant)?
    /// Whether an RSSI move waits for the end of ``PresenceSettings/rssiInterval``.
    public internal(set) var rssiMovePending = false

    init(name: String, awayAfter: Duration, settings: PresenceSettings) {
        self.name = name
        self.awayAfter = awayAfter
        window = RSSIWindow(span: settings.rssiWindow)
        roomChoice = AdapterChoice(rule: settings.switchRule)
        owned = !settings.cluster
    }

    /// This bridge's smoothed reading while it counts for the room (heard here in the last `readingLifetime`).
    func ownReading(now: Instant, lifetime: Duration) -> Int? {
        guard let heard = lastHeardHere, now < heard.advanced(by: lifetime) else { return nil }
        return window.median
    }

    /// Records that it was heard at `heardAt` (`unixTime` in Unix seconds), keeping the latest.
    mutating func noteHeard(at heardAt: Instant, unixTime: Int64) {
        if lastHeard.map({ $0 < heardAt }) ?? true { lastHeard = heardAt }
        if lastSeen.map({ $0 < unixTime }) ?? true { lastSeen = unixTime }
    }
}
