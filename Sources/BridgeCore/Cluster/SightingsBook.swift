/// This bridge's own `{base}/bridges/{id}/sightings` (SPEC §10), as a pure state machine: what the radios hear, the
/// links and the free slots go in (``SightingsInput``); the ``SightingsPayload`` to publish, when one is due, comes out.
/// It reads no clock: the runtime passes a monotonic `now` and the wall-clock Unix seconds for `t`.
///
/// ## What the payload holds
/// - Every wanted device (by topic segment, with its address) heard in the last ``readingLifetime`` (60 s) on an
///   adapter that is present, or to which this bridge holds a link. A reading counts while `now - heardAt` is less
///   than 60 s; at 60 s it is gone. Invalid RSSIs (127, out of range) are ignored as if nothing was heard.
/// - `adapter`: the one holding the link if connected; else the one ``AdapterChoice`` picks (the adapter that hears
///   it best among those with a free slot, with the `switch_margin`/`switch_after` hysteresis); when no adapter with
///   a free slot hears it, the one that hears it best (its `free_slots` of 0 then tells the others it cannot take it).
///   Every payload build is one observation of each device's ``AdapterChoice``; ``adapter(for:)`` gives the result,
///   so the runtime can connect through the adapter the sightings name.
/// - `rssi`: the device's reading on that adapter; `null` when connected and not heard there in the last 60 s.
/// - `connected`: from ``SightingsInput/linkUp(address:adapter:)`` / ``SightingsInput/linkDown(address:)`` only.
/// - `adapters`: the last ``SightingsInput/adapters(freeSlots:)``, as given (clamped to 0...1000, what the decoder accepts).
///
/// ## When to publish
/// - **Beat**: every ``interval`` (5 s) after the last publication, always, even when nothing changed: the SPEC says
///   "every 5 s", and the other bridges treat sightings not refreshed for three intervals as stale
///   (``ClusterSettings/sightingsStaleAfter``), so the beat is the heartbeat that keeps this bridge a candidate.
/// - **At once** on ``SightingsInput/brokerConnected`` (so the others know this bridge within their quiet time), and on
///   ``SightingsInput/publishRequested`` ("when an owner must be chosen"), but only if the payload differs from the
///   last one published (`t` aside): an unchanged payload tells nobody anything the retained one does not. A device
///   heard that the last payload does not name requests one (the others may be choosing its owner: two bridges that
///   start together must know what each other hears before their quiet time ends); the next ``SightingsInput/tick``
///   sends it, never the reading itself. RSSI changes alone never trigger a publication (they change constantly; the
///   beat carries them).
/// - **Rate limit**: never two publications less than ``minimumGap`` (500 ms) apart; a request inside the gap waits
///   for its end (``nextDeadline(after:)``). 500 ms bounds a burst of claims (one request per reconcile) to two
///   messages a second per bridge, and still lets the new slot counts reach the others well within a claim's 1 s wait
///   (``ClusterSettings/claimWait``), which is when they matter.
public struct SightingsBook<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// One valid reading.
    public struct Reading: Sendable, Hashable {
        /// dBm.
        public var rssi: Int
        /// When it was heard.
        public var heardAt: Instant
    }

    /// The devices this bridge's configuration wants: topic segment → address (grows with ``want(_:address:)``).
    public private(set) var wanted: [String: BluetoothAddress]
    /// The hysteresis of the adapter choice.
    public let rule: SwitchRule
    /// How long a reading counts (SPEC: "heard in the last 60 s").
    public let readingLifetime: Duration
    /// The beat (SPEC: "every 5 s").
    public let interval: Duration
    /// The shortest time between two publications.
    public let minimumGap: Duration

    /// Valid readings per device segment and adapter (expired ones are dropped at each build).
    public private(set) var readings: [String: [String: Reading]] = [:]
    /// The adapter holding each linked device's link, by segment.
    public private(set) var links: [String: String] = [:]
    /// Free slots per adapter present.
    public private(set) var freeSlots: [String: Int] = [:]
    /// The last payload published and when; `nil` before the first since the broker came up.
    public private(set) var lastPublished: (payload: SightingsPayload, at: Instant)?
    /// Whether a publication was requested and is waiting for the rate limit.
    public private(set) var requestPending = false
    /// Whether the broker connection is up.
    public private(set) var brokerUp = false
    var choices: [String: AdapterChoice<Instant>] = [:]
    /// Segments whose entries say when they were last heard (`last_seen`: trackers).
    public private(set) var aged: Set<String> = []
    private(set) var segmentsByAddress: [BluetoothAddress: [String]]

    /// Creates a book with nothing heard, no adapters and the broker down.
    public init(
        wanted: [String: BluetoothAddress], rule: SwitchRule = SwitchRule(), readingLifetime: Duration = .seconds(60),
        interval: Duration = .seconds(5), minimumGap: Duration = .milliseconds(500)
    ) {
        self.wanted = wanted
        self.rule = rule
        self.readingLifetime = readingLifetime
        self.interval = interval
        self.minimumGap = minimumGap
        var bySegment: [BluetoothAddress: [String]] = [:]
        for (segment, address) in wanted { bySegment[address, default: []].append(segment) }
        segmentsByAddress = bySegment.mapValues { $0.sorted() }
    }

    /// Adds a wanted device (found by name, service or decoder); a segment already wanted keeps its address.
    public mutating func want(_ segment: String, address: BluetoothAddress) {
        guard wanted[segment] == nil else { return }
        wanted[segment] = address
        segmentsByAddress[address, default: []].append(segment)
        segmentsByAddress[address]?.sort()
    }

    /// Stops wanting a device (removed or renamed at run time): its sightings are no longer reported.
    public mutating func unwant(_ segment: String) {
        guard let address = wanted.removeValue(forKey: segment) else { return }
        segmentsByAddress[address]?.removeAll { $0 == segment }
        if segmentsByAddress[address]?.isEmpty == true { segmentsByAddress[address] = nil }
        aged.remove(segment)
        choices[segment] = nil
    }

    /// Makes the device's entries carry `last_seen` (a tracker: SPEC §12).
    public mutating func reportLastSeen(_ segment: String) {
        aged.insert(segment)
    }

    /// A wanted device now has another address (a tracker's resolvable private address changed: SPEC §12): what it
    /// was heard at stays its reading, and the new address is the one the payload names from now on.
    public mutating func move(_ segment: String, to address: BluetoothAddress) {
        guard let old = wanted[segment], old != address else { return }
        wanted[segment] = address
        segmentsByAddress[old]?.removeAll { $0 == segment }
        if segmentsByAddress[old]?.isEmpty == true { segmentsByAddress[old] = nil }
        segmentsByAddress[address, default: []].append(segment)
        segmentsByAddress[address]?.sort()
    }

    /// Whether a device with this address is wanted.
    public func wants(address: BluetoothAddress) -> Bool { segmentsByAddress[address] != nil }

    /// Whether `rssi` is a real reading: not BlueZ's 127 ("invalid") and inside ``SightingsPayload/rssiRange``.
    public static func isValid(rssi: Int) -> Bool {
        rssi != 127 && SightingsPayload.rssiRange.contains(Int64(rssi))
    }

    /// Handles one input at `now` (`unixTime`: the wall clock in Unix seconds, for `t`) and returns the payload to
    /// publish (retained) now, if one is due.
    public mutating func handle(_ input: SightingsInput, now: Instant, unixTime: Int64) -> SightingsPayload? {
        switch input {
        case .brokerConnected:
            brokerUp = true
            lastPublished = nil
            requestPending = false
            return publish(now: now, unixTime: unixTime)
        case .brokerDisconnected:
            brokerUp = false
            lastPublished = nil
            requestPending = false
            return nil
        case .adapters(let slots):
            freeSlots = slots
        case .heard(let address, let adapter, let rssi):
            guard Self.isValid(rssi: rssi) else { break }
            for segment in segmentsByAddress[address] ?? [] {
                readings[segment, default: [:]][adapter] = Reading(rssi: rssi, heardAt: now)
                // A device the others do not know this bridge hears: they may be about to choose its owner.
                if let last = lastPublished, last.payload.devices[segment] == nil { requestPending = true }
            }
            // Never at once: the adapters that hear the same advertisement report it one after the other, and the
            // first to report must not decide the adapter (each build observes it): the next tick publishes.
            return nil
        case .linkUp(let address, let adapter):
            for segment in segmentsByAddress[address] ?? [] { links[segment] = adapter }
        case .linkDown(let address):
            for segment in segmentsByAddress[address] ?? [] { links[segment] = nil }
        case .publishRequested:
            requestPending = true
        case .tick:
            break
        }
        return due(now: now, unixTime: unixTime)
    }

    /// When the next publication is due if nothing else happens: the end of the rate limit for a waiting request,
    /// else the beat; `nil` while the broker is down.
    public func nextDeadline(after now: Instant) -> Instant? {
        guard brokerUp else { return nil }
        guard let last = lastPublished else { return now }
        return requestPending ? last.at.advanced(by: minimumGap) : last.at.advanced(by: interval)
    }

    /// The adapter the device is on or would be on next, as the last payload build decided (``AdapterChoice/current``):
    /// while linked, the link's adapter unless the switch rule has decided a move (the payload still names the link's
    /// adapter until the link is down); `nil` before the device was first heard.
    public func adapter(for segment: String) -> String? {
        choices[segment]?.current
    }

    /// The payload as it stands at `now`, with `t` = `unixTime`. Each call is one observation of every device's
    /// ``AdapterChoice`` (and drops expired readings).
    public mutating func build(now: Instant, unixTime: Int64) -> SightingsPayload {
        var devices: [String: SightingsPayload.Device] = [:]
        for segment in wanted.keys.sorted() {
            let fresh = (readings[segment] ?? [:]).filter { now < $0.value.heardAt.advanced(by: readingLifetime) }
            readings[segment] = fresh.isEmpty ? nil : fresh
            let present = fresh.filter { freeSlots[$0.key] != nil }.mapValues(\.rssi)
            let link = links[segment]
            var choice = choices[segment] ?? AdapterChoice(rule: rule)
            let chosen = choice.choose(readings: present, freeSlots: freeSlots, connectedOn: link, now: now)
            choices[segment] = choice
            let adapter: String
            if let link {
                adapter = link
            } else if let pick = chosen ?? AdapterChoice<Instant>.best(present) {
                adapter = pick
            } else {
                continue  // not heard in the last 60 s and not linked: not in the payload
            }
            var lastSeen: Int64?
            if aged.contains(segment), let heardAt = fresh[adapter]?.heardAt {
                lastSeen = unixTime - heardAt.duration(to: now).components.seconds
            }
            devices[segment] = SightingsPayload.Device(
                address: wanted[segment]!, rssi: present[adapter], adapter: adapter, connected: link != nil,
                lastSeen: lastSeen)
        }
        return SightingsPayload(
            time: unixTime, adapters: freeSlots.mapValues { SightingsPayload.Adapter(freeSlots: min(1000, max(0, $0))) },
            devices: devices)
    }

    /// The payload to publish at `now`, if one is due (see the type's documentation).
    mutating func due(now: Instant, unixTime: Int64) -> SightingsPayload? {
        guard brokerUp else { return nil }
        guard let last = lastPublished else { return publish(now: now, unixTime: unixTime) }
        if now >= last.at.advanced(by: interval) { return publish(now: now, unixTime: unixTime) }
        guard requestPending, now >= last.at.advanced(by: minimumGap) else { return nil }
        requestPending = false
        var payload = build(now: now, unixTime: unixTime)
        payload.time = last.payload.time
        guard payload != last.payload else { return nil }  // nothing new: the retained payload still holds
        payload.time = unixTime
        lastPublished = (payload, now)
        return payload
    }

    mutating func publish(now: Instant, unixTime: Int64) -> SightingsPayload {
        let payload = build(now: now, unixTime: unixTime)
        lastPublished = (payload, now)
        requestPending = false
        return payload
    }
}
