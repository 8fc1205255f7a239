/// The `switch_margin` / `switch_after` hysteresis of SPEC §10, shared by the adapter choice inside one bridge
/// (``AdapterChoice``) and the handover between bridges (``OwnershipCore``, rule 3).
///
/// A challenger takes a device from its incumbent only when it has been stronger by at least ``margin`` dB at
/// every observation for at least ``after``; one observation below the margin starts the wait over
/// (``SwitchTimer``). That is what keeps an RSSI that wobbles around the margin from moving a device back and forth.
public struct SwitchRule: Sendable, Hashable {
    /// `switch_margin` in dB (default 10).
    public var margin: Int
    /// `switch_after` (default 30 s).
    public var after: Duration

    /// Creates a rule.
    public init(margin: Int = 10, after: Duration = .seconds(30)) {
        self.margin = margin
        self.after = after
    }

    /// How well the incumbent hears the device.
    public enum Incumbent: Sendable, Hashable {
        /// Heard at this RSSI.
        case heard(Int)
        /// Heard (a link is up) but the strength is unknown: no challenger can be "stronger by the margin".
        case heardUnknownStrength
        /// Not heard at all: any challenger that hears it is stronger.
        case notHeard
    }

    /// Whether a challenger hearing the device at `challenger` dBm beats `incumbent` by the margin.
    public func isStronger(_ challenger: Int, than incumbent: Incumbent) -> Bool {
        switch incumbent {
        case .heard(let rssi): return challenger - rssi >= margin
        case .heardUnknownStrength: return false
        case .notHeard: return true
        }
    }
}

/// Since when each challenger has qualified under a ``SwitchRule``, observation by observation.
public struct SwitchTimer<Key: Hashable & Sendable, Instant: InstantProtocol>: Sendable
where Instant.Duration == Duration {
    /// The first instant of each challenger's current unbroken run of qualifying observations.
    public private(set) var since: [Key: Instant] = [:]

    /// Creates an empty timer.
    public init() {}

    /// Records one observation at `now`: challengers not in `qualifying` start over. Returns those that have
    /// qualified for at least `after`.
    public mutating func observe(qualifying: Set<Key>, now: Instant, after: Duration) -> Set<Key> {
        since = since.filter { qualifying.contains($0.key) }
        var matured: Set<Key> = []
        for key in qualifying {
            let start = since[key] ?? now
            since[key] = start
            if start.advanced(by: after) <= now { matured.insert(key) }
        }
        return matured
    }

    /// The earliest instant at which a challenger that keeps qualifying matures (for the runtime's timer).
    public func nextDeadline(after: Duration) -> Instant? {
        since.values.map { $0.advanced(by: after) }.min()
    }

    /// Forgets one challenger: its run starts over at its next qualifying observation.
    public mutating func forget(_ key: Key) { since[key] = nil }

    /// Forgets every challenger.
    public mutating func reset() { since = [:] }
}
