/// Presence of the configured trackers (SPEC §12) as a pure, clock-driven state machine: what the radios hear (and,
/// in a cluster, what the other bridges report) goes in as ``PresenceInput``; the retained `{base}/{tracker}/presence`
/// payloads to publish come out. It reads no clock: the runtime passes a monotonic `now` and the wall-clock Unix
/// seconds (`last_seen`), and calls ``handle(_:now:unixTime:)`` with ``PresenceInput/tick`` at ``nextDeadline(after:)``.
///
/// ## State
/// - `home` at the first advertisement heard (by any bridge); `not_home` once none was heard for the tracker's
///   `away_after`. A tracker not heard since the start becomes `not_home` `away_after` after the start (so a `home`
///   retained from before a restart does not stay forever); until then it is unknown and nothing is published.
/// - `rssi`: this bridge's readings smoothed by a median over ``PresenceSettings/rssiWindow`` (``RSSIWindow``),
///   127 ignored; in a cluster, the reading of the room's bridge. `null` once `not_home`.
/// - `bridge`, the room: the bridge that hears the tracker best, chosen with ``AdapterChoice`` over the bridges'
///   readings (this one's median while heard in the last ``PresenceSettings/readingLifetime``, the others' from their
///   sightings while fresh): the same `switch_margin`/`switch_after` hysteresis as device ownership, so someone
///   standing between two rooms does not flap. Without a cluster it is always this bridge. Once nobody hears the
///   tracker it stays the last room.
///
/// ## Publications
/// - At once when the state or the room changes, when the broker connection comes up, and when this bridge gains
///   the tracker (cluster).
/// - While `home`, when the smoothed RSSI moved by ``PresenceSettings/rssiStep`` (3 dB) or more since the last
///   publication, at most every ``PresenceSettings/rssiInterval`` (10 s): a move inside the interval waits for its end
///   and is published then if it still holds.
/// - Never while the broker is down, never for a tracker another bridge owns (cluster rule 5), never per
///   advertisement: `last_seen` alone triggers nothing.
///
/// ## Cluster
/// Every bridge runs a core. Each reports its own reading of every tracker it hears (``ownSighting(of:now:)``) in its
/// `sightings`; the runtime feeds the other bridges' sightings in (``PresenceInput/sightings(bridge:trackers:)``) and
/// tells the core which trackers this bridge owns (``OwnershipCore`` with ``ClusterService/listen``,
/// ``PresenceInput/ownership(tracker:owned:)``). The owner decides the room among all and publishes; `not_home` only
/// when no bridge heard the tracker for `away_after`.
public struct PresenceCore<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The settings.
    public let settings: PresenceSettings
    /// Every tracker's presence, by name.
    public private(set) var trackers: [String: TrackerPresence<Instant>]
    /// The tracker names in configuration order (publications come in this order).
    public let names: [String]
    /// When the core started (`not_home` for trackers never heard is counted from here).
    public let startedAt: Instant
    /// Whether the broker connection is up.
    public private(set) var brokerUp = false

    /// Creates a core for the configured trackers at `now`, with the broker down and nothing heard.
    public init(trackers: [BridgeConfig.Tracker], settings: PresenceSettings, now: Instant) {
        self.settings = settings
        startedAt = now
        names = trackers.map(\.name)
        var all: [String: TrackerPresence<Instant>] = [:]
        for tracker in trackers {
            all[tracker.name] = TrackerPresence(name: tracker.name, awayAfter: tracker.awayAfter, settings: settings)
        }
        self.trackers = all
    }

    /// Handles one input at `now` (`unixTime`: the wall clock in Unix seconds) and returns the payloads to publish,
    /// retained, on ``TopicMapper/presence(tracker:)``.
    public mutating func handle(_ input: PresenceInput, now: Instant, unixTime: Int64) -> [PresencePublication] {
        switch input {
        case .brokerConnected:
            brokerUp = true
            for name in names { trackers[name]?.lastPublished = nil }
        case .brokerDisconnected:
            brokerUp = false
            for name in names { trackers[name]?.lastPublished = nil }
            return []
        case .heard(let name, let rssi):
            guard var tracker = trackers[name] else { return [] }
            tracker.lastHeardHere = now
            tracker.noteHeard(at: now, unixTime: unixTime)
            if let rssi { tracker.window.add(rssi, at: now) }
            trackers[name] = tracker
            return evaluate(name, now: now).map { [$0] } ?? []
        case .sightings(let bridge, let reports):
            guard bridge != settings.bridgeID else { return [] }
            for name in names {
                guard var tracker = trackers[name] else { continue }
                if let report = reports[name] {
                    let rssi = report.rssi.flatMap { RSSIWindow<Instant>.isValid($0) ? $0 : nil }
                    tracker.remote[bridge] = TrackerPresence.Remote(rssi: rssi, receivedAt: now)
                    let ago = max(report.heardAgo, .zero)
                    tracker.noteHeard(at: now.advanced(by: .zero - ago), unixTime: unixTime - ago.components.seconds)
                } else {
                    tracker.remote[bridge] = nil
                }
                trackers[name] = tracker
            }
        case .bridgeGone(let bridge):
            for name in names { trackers[name]?.remote[bridge] = nil }
        case .ownership(let name, let owned):
            guard var tracker = trackers[name] else { return [] }
            let owns = owned || !settings.cluster
            if tracker.owned != owns { tracker.lastPublished = nil }
            tracker.owned = owns
            trackers[name] = tracker
            return evaluate(name, now: now).map { [$0] } ?? []
        case .tick:
            break
        }
        return names.compactMap { evaluate($0, now: now) }
    }

    /// When something changes if nothing else happens (a tracker going `not_home`, an RSSI move's interval ending, a
    /// room switch maturing, a reading ceasing to count): the earliest such instant after `now`, `nil` when none.
    public func nextDeadline(after now: Instant) -> Instant? {
        var deadlines: [Instant] = []
        for tracker in trackers.values {
            if tracker.state != .notHome {
                deadlines.append((tracker.lastHeard ?? startedAt).advanced(by: tracker.awayAfter))
            }
            if tracker.rssiMovePending, let last = tracker.lastPublished {
                deadlines.append(last.at.advanced(by: settings.rssiInterval))
            }
            if let switchAt = tracker.roomChoice.nextDeadline { deadlines.append(switchAt) }
            for remote in tracker.remote.values { deadlines.append(remote.receivedAt.advanced(by: settings.remoteLifetime)) }
            if settings.cluster, let here = tracker.lastHeardHere {
                deadlines.append(here.advanced(by: settings.readingLifetime))
            }
        }
        return deadlines.filter { $0 > now }.min()
    }

    /// This bridge's own sighting of `tracker` for its `sightings` (cluster): its smoothed RSSI and how long ago it
    /// heard it, while heard in the last ``PresenceSettings/readingLifetime``; `nil` otherwise (not in the payload).
    public func ownSighting(of tracker: String, now: Instant) -> RemoteSighting? {
        guard let presence = trackers[tracker], let heard = presence.lastHeardHere,
            now < heard.advanced(by: settings.readingLifetime)
        else { return nil }
        return RemoteSighting(rssi: presence.window.median, heardAgo: heard.duration(to: now))
    }

    /// The payload that `tracker` would have now, if its state is known (for `bridge/devices`, health or a
    /// request; publishing goes through ``handle(_:now:unixTime:)``).
    public func payload(of tracker: String) -> PresencePayload? {
        guard let presence = trackers[tracker], let state = presence.state else { return nil }
        let room = presence.room ?? settings.bridgeID
        return PresencePayload(
            state: state, rssi: state == .home ? reading(presence, in: room) : nil, bridge: room,
            lastSeen: presence.lastSeen)
    }

    // MARK: - Evaluation

    /// Brings one tracker up to `now` and returns its publication, if one is due.
    mutating func evaluate(_ name: String, now: Instant) -> PresencePublication? {
        guard var tracker = trackers[name] else { return nil }
        defer { trackers[name] = tracker }
        tracker.remote = tracker.remote.filter { now < $0.value.receivedAt.advanced(by: settings.remoteLifetime) }
        tracker.window.expire(now: now)
        // State.
        if let heard = tracker.lastHeard {
            tracker.state = now < heard.advanced(by: tracker.awayAfter) ? .home : .notHome
        } else if now >= startedAt.advanced(by: tracker.awayAfter) {
            tracker.state = .notHome
        }
        // Room: every bridge's reading that counts, this one's included.
        var readings: [String: Int] = [:]
        for (bridge, remote) in tracker.remote { if let rssi = remote.rssi { readings[bridge] = rssi } }
        if let own = tracker.ownReading(now: now, lifetime: settings.readingLifetime) { readings[settings.bridgeID] = own }
        if !readings.isEmpty {
            var everyone: [String: Int] = [:]
            for bridge in readings.keys { everyone[bridge] = 1 }
            tracker.room = tracker.roomChoice.choose(readings: readings, freeSlots: everyone, connectedOn: nil, now: now)
        } else if let here = tracker.lastHeardHere, now < here.advanced(by: settings.readingLifetime) {
            tracker.room = tracker.room ?? settings.bridgeID  // heard here, strength unknown
        } else if tracker.room == nil, let first = tracker.remote.keys.sorted(by: BridgeID.sortsBefore).first {
            tracker.room = first  // heard elsewhere, strength unknown
        }
        guard let state = tracker.state, tracker.owned, brokerUp else {
            tracker.rssiMovePending = false
            return nil
        }
        let room = tracker.room ?? settings.bridgeID
        let rssi = state == .home ? readings[room] : nil
        let payload = PresencePayload(state: state, rssi: rssi, bridge: room, lastSeen: tracker.lastSeen)
        guard let last = tracker.lastPublished, last.payload.state == state, last.payload.bridge == room else {
            return publish(payload, tracker: &tracker, now: now)
        }
        tracker.rssiMovePending = false
        guard state == .home, moved(from: last.payload.rssi, to: rssi) else { return nil }
        guard now >= last.at.advanced(by: settings.rssiInterval) else {
            tracker.rssiMovePending = true
            return nil
        }
        return publish(payload, tracker: &tracker, now: now)
    }

    private func publish(_ payload: PresencePayload, tracker: inout TrackerPresence<Instant>, now: Instant) -> PresencePublication {
        tracker.lastPublished = (payload, now)
        tracker.rssiMovePending = false
        return PresencePublication(tracker: tracker.name, payload: payload)
    }

    /// Whether the smoothed RSSI moved enough since `old` to be published: by ``PresenceSettings/rssiStep`` or more,
    /// or from unknown to known.
    func moved(from old: Int?, to new: Int?) -> Bool {
        switch (old, new) {
        case (let a?, let b?): return abs(a - b) >= settings.rssiStep
        case (nil, .some): return true
        default: return false
        }
    }

    /// The reading of the room's bridge as last known.
    private func reading(_ tracker: TrackerPresence<Instant>, in room: String) -> Int? {
        if room == settings.bridgeID { return tracker.window.median }
        return tracker.remote[room]?.rssi
    }
}
