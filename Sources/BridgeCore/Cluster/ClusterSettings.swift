/// The cluster's timing and identity, from `bridge.id` and `cluster.*` (SPEC §10).
public struct ClusterSettings: Sendable, Hashable {
    /// This bridge's id.
    public var bridgeID: String
    /// `switch_margin` / `switch_after`.
    public var switchRule: SwitchRule
    /// How long the owner topic must have named this bridge before it serves the device (rule 2: "waits 1 s").
    public var claimWait: Duration
    /// No claims in the first this-long on the broker (rule 2: one sightings interval, 5 s).
    public var startupQuiet: Duration
    /// An owner that has not heard its device for this long releases it (rule 3: 60 s).
    public var releaseAfter: Duration
    /// Another bridge's sightings not refreshed for this long no longer count (three sightings intervals).
    public var sightingsStaleAfter: Duration

    /// Creates settings with the SPEC's defaults.
    public init(
        bridgeID: String, switchRule: SwitchRule = SwitchRule(), claimWait: Duration = .seconds(1),
        startupQuiet: Duration = .seconds(5), releaseAfter: Duration = .seconds(60),
        sightingsStaleAfter: Duration = .seconds(15)
    ) {
        self.bridgeID = bridgeID
        self.switchRule = switchRule
        self.claimWait = claimWait
        self.startupQuiet = startupQuiet
        self.releaseAfter = releaseAfter
        self.sightingsStaleAfter = sightingsStaleAfter
    }
}

/// How a wanted device is served.
public enum ClusterService: Sendable, Hashable {
    /// Connected (`always`, `poll`, known peripherals): the owner needs a free connection slot.
    case link
    /// Only listened to (advertisement sensors §7, trackers §12): owned without slots; the owner publishes its packets.
    case listen
}

/// What ``OwnershipCore`` is told.
public enum ClusterEvent: Sendable, Hashable {
    /// The broker connection came up (also after a reconnect): the views are rebuilt from the retained
    /// topics that follow, and nothing is claimed for ``ClusterSettings/startupQuiet``.
    case brokerConnected
    /// The broker connection is lost: every device this bridge serves is stopped (another bridge may claim it
    /// once this bridge's last will says `offline`).
    case brokerDisconnected
    /// `{base}/bridges/{bridge}/state`: `true` online, `false` offline, `nil` the topic was emptied.
    case bridgeState(bridge: String, online: Bool?)
    /// `{base}/bridges/{bridge}/sightings` (this bridge's own too, as published); `nil`: emptied or malformed.
    case sightings(bridge: String, SightingsPayload?)
    /// `{base}/{device}/owner`; `nil`: emptied or malformed.
    case owner(device: String, OwnerPayload?)
    /// A link of this bridge to the device is up (connected or connecting).
    case linkUp(device: String)
    /// This bridge's link to the device is down.
    case linkDown(device: String)
    /// Time passed (at or after ``OwnershipCore/nextDeadline(after:)``).
    case tick
}

/// What ``OwnershipCore`` asks the runtime to do, in order.
public enum ClusterAction: Sendable, Hashable {
    /// Publish the retained `{device}/owner` naming `bridge` and `adapter` (the runtime adds `since`).
    case publishOwner(device: String, bridge: String, adapter: String)
    /// Publish an empty retained `{device}/owner`: the device has no owner.
    case clearOwner(device: String)
    /// Serve the device through `adapter`: connect it (and reconnect with backoff), or for a
    /// ``ClusterService/listen`` device publish its packets.
    case serve(device: String, adapter: String)
    /// Stop serving: disconnect (answer with ``ClusterEvent/linkDown(device:)``), or stop publishing its packets.
    case stopServing(device: String)
    /// Publish this bridge's sightings now: it has just claimed a device, so its free slots changed (SPEC: "when an
    /// owner must be chosen"); the runtime also publishes them every 5 s and feeds them back as ``ClusterEvent/sightings(bridge:_:)``.
    case publishSightings
}

/// Who handles a `/set` or `/get` for a device (rule 1).
public enum ClusterCommandRole: Sendable, Hashable {
    /// This bridge owns the device: it executes the command (waiting for the link as usual).
    case execute
    /// No bridge owns it and this bridge is the online bridge whose id sorts first: it answers `not_connected`.
    case answerNotConnected
    /// Another bridge handles it.
    case ignore

    /// The rule (SPEC §10 rule 1): the online owner executes, the other bridges ignore; a device nobody owns is
    /// answered by the online bridge whose id sorts first (`answersUnowned`).
    public static func of(bridge: String, owner: String?, answersUnowned: Bool) -> ClusterCommandRole {
        if let owner { return owner == bridge ? .execute : .ignore }
        return answersUnowned ? .answerNotConnected : .ignore
    }
}
