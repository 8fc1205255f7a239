/// The choice of adapter for one device inside one bridge (SPEC §10, "several adapters, one bridge"), a pure
/// state machine: readings in, the adapter to use out.
///
/// - A device with no adapter yet, or whose adapter can no longer take it (not heard there, no free slot, the
///   adapter gone), goes to the adapter that hears it best among those with a free slot (ties: the name that
///   sorts first).
/// - Otherwise it stays where it is until another adapter with a free slot has heard it stronger by
///   ``SwitchRule/margin`` at every observation for ``SwitchRule/after`` (``SwitchTimer``).
/// - While a link is up on adapter X, X counts as hearing the device (at its last RSSI there, or of unknown
///   strength, which nothing beats) and the link is kept; only when the rule holds does ``choose(readings:freeSlots:connectedOn:now:)``
///   return another adapter, and the runtime then disconnects and reconnects through it: the move happens between
///   connections, never with two links.
///
/// The same result is what a bridge reports as the device's `adapter` in its `sightings`.
public struct AdapterChoice<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The hysteresis.
    public let rule: SwitchRule
    /// The adapter the device is on or would be on next.
    public private(set) var current: String?
    /// A move decided while a link was up, kept until that link is down.
    public private(set) var pendingMove: String?
    var timer = SwitchTimer<String, Instant>()

    /// Creates a choice with no adapter yet.
    public init(rule: SwitchRule) {
        self.rule = rule
    }

    /// One observation at `now`.
    /// - Parameters:
    ///   - readings: RSSI per adapter that heard the device recently (the caller drops readings older than 60 s).
    ///   - freeSlots: free connection slots per adapter present (an adapter missing here is gone or powered off).
    ///   - connectedOn: the adapter holding the device's link, if one is up.
    /// - Returns: the adapter to use; `nil` when no adapter can take it now. When it differs from `connectedOn`
    ///   the device is to move (disconnect, then connect through the result).
    public mutating func choose(
        readings: [String: Int], freeSlots: [String: Int], connectedOn: String?, now: Instant
    ) -> String? {
        if let link = connectedOn, freeSlots[link] != nil {
            if let move = pendingMove { return move }
            if current != link { timer.reset() }
            current = link
            let incumbent: SwitchRule.Incumbent = readings[link].map { .heard($0) } ?? .heardUnknownStrength
            if let better = challenger(of: link, incumbent: incumbent, readings: readings, freeSlots: freeSlots, now: now) {
                pendingMove = better
                current = better
                timer.reset()
            }
            return current
        }
        pendingMove = nil
        let usable = readings.filter { (freeSlots[$0.key] ?? 0) > 0 }
        guard let place = current, let rssi = usable[place] else {
            timer.reset()
            current = Self.best(usable) ?? current
            return usable[current ?? ""] != nil ? current : nil
        }
        if let better = challenger(of: place, incumbent: .heard(rssi), readings: usable, freeSlots: freeSlots, now: now) {
            current = better
            timer.reset()
        }
        return current
    }

    /// When a challenger that keeps qualifying would win (for the runtime's timer), if one is waiting.
    public var nextDeadline: Instant? { timer.nextDeadline(after: rule.after) }

    func challengerSet(of place: String, incumbent: SwitchRule.Incumbent, readings: [String: Int], freeSlots: [String: Int])
        -> [String: Int]
    {
        readings.filter { $0.key != place && (freeSlots[$0.key] ?? 0) > 0 && rule.isStronger($0.value, than: incumbent) }
    }

    mutating func challenger(
        of place: String, incumbent: SwitchRule.Incumbent, readings: [String: Int], freeSlots: [String: Int], now: Instant
    ) -> String? {
        let qualifying = challengerSet(of: place, incumbent: incumbent, readings: readings, freeSlots: freeSlots)
        let matured = timer.observe(qualifying: Set(qualifying.keys), now: now, after: rule.after)
        return Self.best(qualifying.filter { matured.contains($0.key) })
    }

    /// The strongest reading; ties: the name that sorts first.
    static func best(_ readings: [String: Int]) -> String? {
        readings.min { lhs, rhs in
            lhs.value != rhs.value ? lhs.value > rhs.value : BridgeID.sortsBefore(lhs.key, rhs.key)
        }?.key
    }
}
