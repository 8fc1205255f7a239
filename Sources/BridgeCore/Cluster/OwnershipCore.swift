/// The choice of owner for the devices of one bridge in a cluster (SPEC §10, rules 1–6), as a pure state machine.
///
/// The runtime feeds it what it receives from the broker (bridge states, sightings, owner claims), its own link
/// events and the time, and performs the ``ClusterAction``s it returns; it never touches a clock or a task, so the
/// races of a cluster are unit-tested step by step (`ClusterOwnershipTests`, `ClusterSimulationTests`).
///
/// ## What is decided where
/// Every bridge runs the same function over the same retained topics; there is no coordinator.
/// - **Views** (``handle(_:now:)``): the latest `state`, `sightings` and `owner` per topic, each stamped with this
///   bridge's own receipt time. Bridges' wall clocks are never compared; `t` and `since` are informational.
/// - **Claim** (rule 2): a wanted device whose owner topic is empty or names a bridge that is not `online` is
///   claimed by the candidate with the strongest sightings among the online bridges whose sightings are fresh and
///   have a free slot on the adapter they hear it with (``ClusterService/listen`` devices need no slot; ties: the
///   id that sorts first, ``BridgeID/sortsBefore(_:_:)``). Only the winner publishes; nothing is claimed in the
///   first ``ClusterSettings/startupQuiet`` on the broker, so the retained topics are all in before anyone chooses.
/// - **Serve** (rules 1, 2): a bridge serves a device only once its owner topic has named this bridge for
///   ``ClusterSettings/claimWait`` (and the quiet time is over), whether it claimed it or was handed it, and stops
///   the moment the topic names another bridge.
/// - **Handover and release** (rule 3): the owner that serves a device hands it to another bridge whose sightings
///   beat its own by the ``SwitchRule`` (with a free slot), or, when it has not heard the device for
///   ``ClusterSettings/releaseAfter``, to the best other candidate (else it empties the topic): it stops serving,
///   waits for its link to be down, and only then publishes the owner topic naming the other bridge.
/// - **Failover and stickiness** (rule 4): an `offline` state empties the ownership of that bridge's devices, and
///   the claim rule applies; a bridge that comes back finds its devices owned by others and leaves them to rule 3.
/// - **Commands** (rule 1) and **known peripherals** (rule 6): ``commandRole(for:)`` and ``isServing(_:)``.
///
/// ## Why the broker's per-topic order is enough
/// MQTT delivers the messages of one topic to every subscriber in the order the broker accepted them, and a
/// retained topic replays its last message to a new subscriber. So every bridge sees the same sequence of claims
/// for a device and ends with the same last one. Two bridges claiming at once both publish; both receive both
/// claims in the same order; after ``ClusterSettings/claimWait`` the topic names the same one for both, and only
/// that one connects. A handover publishes only after the old link is down, so the new owner's link never
/// overlaps it. What this relies on: a claim reaches every bridge within the claim wait (1 s), and a bridge that
/// loses the broker stops its links before its last will can be published (1.5 × keepalive).
/// A clustered broker must keep one ordered stream per `owner` topic.
public struct OwnershipCore<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Identity and timing.
    public let settings: ClusterSettings
    /// The devices this bridge's configuration wants, by topic segment (grows with ``want(_:_:)``: a device matched by
    /// name or service is wanted once found).
    public private(set) var wanted: [String: ClusterService]

    /// The latest owner claim of a device and since when (receipt) it has named the same bridge.
    public struct OwnerView: Sendable, Hashable {
        /// The payload.
        public var payload: OwnerPayload
        /// When this bridge first saw the topic name `payload.bridge` (unbroken since).
        public var namedSince: Instant
    }

    /// A bridge's sightings and when they were received.
    public struct SightingsView: Sendable, Hashable {
        /// The payload.
        public var payload: SightingsPayload
        /// When this bridge received it.
        public var receivedAt: Instant
    }

    /// What this bridge does with a device.
    public enum Phase: Sendable, Hashable {
        /// Not serving it (another bridge owns it, or a claim is waiting for the claim wait).
        case idle
        /// Serving it through the adapter.
        case serving(adapter: String)
        /// Stopped serving it; once the link is down, the owner topic is handed to `to` (emptied when `nil`).
        case releasing(to: Candidate?)
    }

    /// A bridge that could own a device.
    public struct Candidate: Sendable, Hashable {
        /// Its id.
        public var bridge: String
        /// The adapter it hears the device with.
        public var adapter: String
        /// Its RSSI, `nil` when unknown (ranks last).
        public var rssi: Int?
    }

    /// Owner topics by device.
    public internal(set) var owners: [String: OwnerView] = [:]
    /// Bridge states by id (`true` online).
    public internal(set) var states: [String: Bool] = [:]
    /// Sightings by bridge id (this bridge's own included).
    public internal(set) var sightings: [String: SightingsView] = [:]
    /// This bridge's phase per device (absent: ``Phase/idle``).
    public internal(set) var phases: [String: Phase] = [:]
    /// Devices with a link of this bridge up.
    public internal(set) var linked: Set<String> = []
    /// When this bridge last heard each device (in its own sightings or over a link).
    public internal(set) var lastHeard: [String: Instant] = [:]
    /// Devices wanted at run time (SPEC §14) that nobody claims before this time: the other bridges learn of them by
    /// the same retained entry, a little later, and their sightings must be in before an owner is chosen.
    public internal(set) var claimsHeldUntil: [String: Instant] = [:]
    /// Since when the broker connection has been up; `nil` while it is down.
    public internal(set) var brokerUpSince: Instant?
    var challengers: [String: SwitchTimer<String, Instant>] = [:]
    /// Per device, the receipt time of each qualifying challenger's sightings at the last observation.
    var challengerPayloads: [String: [String: Instant]] = [:]

    /// Creates a core; the broker is down until ``ClusterEvent/brokerConnected``.
    public init(settings: ClusterSettings, wanted: [String: ClusterService]) {
        self.settings = settings
        self.wanted = wanted
    }

    /// This bridge's id.
    public var bridgeID: String { settings.bridgeID }

    /// Adds a wanted device (found by name, service or decoder); the next event reconciles it. An already wanted
    /// device keeps its service.
    public mutating func want(_ device: String, _ service: ClusterService) {
        if wanted[device] == nil { wanted[device] = service }
    }

    /// Stops wanting a device (removed or renamed at run time, SPEC §14): forgets what this bridge did with it.
    /// Returns whether its owner topic names this bridge (the caller empties it: no bridge wants it any more).
    public mutating func unwant(_ device: String) -> Bool {
        wanted[device] = nil
        claimsHeldUntil[device] = nil
        phases[device] = nil
        linked.remove(device)
        lastHeard[device] = nil
        challengers[device] = nil
        challengerPayloads[device] = nil
        return owners[device]?.payload.bridge == bridgeID
    }

    /// Claims nothing for a device until `until` (a device added at run time: every bridge learns of it by its retained
    /// entry, and their sightings of it come up to a sightings interval later).
    public mutating func holdClaims(_ device: String, until: Instant) {
        claimsHeldUntil[device] = until
    }

    /// Handles one event at `now` and returns the actions to perform, in order.
    public mutating func handle(_ event: ClusterEvent, now: Instant) -> [ClusterAction] {
        switch event {
        case .brokerConnected:
            brokerUpSince = now
            owners = [:]
            states = [:]
            sightings = [:]
        case .brokerDisconnected:
            brokerUpSince = nil
            var actions: [ClusterAction] = []
            for device in phases.keys.sorted() {
                if case .serving = phases[device] { actions.append(.stopServing(device: device)) }
            }
            phases = [:]
            challengers = [:]
            challengerPayloads = [:]
            return actions
        case .bridgeState(let bridge, let online):
            states[bridge] = online
        case .sightings(let bridge, let payload):
            sightings[bridge] = payload.map { SightingsView(payload: $0, receivedAt: now) }
        case .owner(let device, let payload):
            recordOwner(device: device, payload, now: now)
        case .linkUp(let device):
            linked.insert(device)
            // A link this bridge does not serve (a leftover, BlueZ connecting on its own): drop it.
            if !isServing(device) { return [.stopServing(device: device)] + reconcileAll(now: now) }
        case .linkDown(let device):
            linked.remove(device)
        case .tick:
            break
        }
        return reconcileAll(now: now)
    }

    /// Whether this bridge serves the device now (rule 6: connect a known peripheral only then).
    public func isServing(_ device: String) -> Bool {
        if case .serving = phases[device] { return true }
        return false
    }

    /// The bridge that owns the device as far as this bridge knows: the owner topic's bridge if it is online.
    public func effectiveOwner(of device: String) -> OwnerPayload? {
        guard let view = owners[device], isOnline(view.payload.bridge) else { return nil }
        return view.payload
    }

    /// Who handles a `/set` or `/get` for the device (rule 1).
    public func commandRole(for device: String) -> ClusterCommandRole {
        .of(bridge: bridgeID, owner: effectiveOwner(of: device)?.bridge, answersUnowned: answersUnownedCommands)
    }

    /// Whether this bridge is the online bridge whose id sorts first: it answers commands for unowned devices.
    public var answersUnownedCommands: Bool {
        let online = states.filter { $0.value == true }.keys + [bridgeID]
        return online.min(by: BridgeID.sortsBefore) == bridgeID
    }

    /// Whether this bridge has been on the broker for the startup quiet time: the retained topics are in, so what it
    /// knows of the owners counts.
    public func isSettled(now: Instant) -> Bool {
        guard let up = brokerUpSince else { return false }
        return now >= up.advanced(by: settings.startupQuiet)
    }

    /// Whether the bridge is online as far as this bridge knows (itself always, while on the broker).
    public func isOnline(_ bridge: String) -> Bool {
        bridge == bridgeID ? brokerUpSince != nil : states[bridge] == true
    }

    /// The earliest instant after `now` at which a ``ClusterEvent/tick`` could change a decision.
    public func nextDeadline(after now: Instant) -> Instant? {
        guard let up = brokerUpSince else { return nil }
        var candidates: [Instant] = [up.advanced(by: settings.startupQuiet)] + Array(claimsHeldUntil.values)
        for (device, view) in owners where view.payload.bridge == bridgeID && phases[device] == nil {
            candidates.append(view.namedSince.advanced(by: settings.claimWait))
        }
        for (device, phase) in phases {
            guard case .serving = phase else { continue }
            if let heard = lastHeard[device] { candidates.append(heard.advanced(by: settings.releaseAfter)) }
            if let due = challengers[device]?.nextDeadline(after: settings.switchRule.after) { candidates.append(due) }
        }
        for (bridge, view) in sightings where bridge != bridgeID {
            candidates.append(view.receivedAt.advanced(by: settings.sightingsStaleAfter))
        }
        return candidates.filter { $0 > now }.min()
    }

    mutating func recordOwner(device: String, _ payload: OwnerPayload?, now: Instant) {
        guard let payload else {
            owners[device] = nil
            return
        }
        if let old = owners[device], old.payload.bridge == payload.bridge {
            owners[device]?.payload = payload  // the same bridge again (an echo, a replay): the wait goes on
        } else {
            owners[device] = OwnerView(payload: payload, namedSince: now)
        }
    }
}
