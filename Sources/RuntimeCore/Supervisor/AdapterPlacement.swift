import BridgeCore

/// Where each device goes among the bridge's adapters (SPEC §10, "several adapters, one bridge"): the pure
/// decisions the supervisor's core keeps for every managed address, over one ``AdapterChoice`` per address.
///
/// Inputs: the adapters that are up (present and powered), each adapter's RSSI of a device (an adapter's
/// own device object, `/org/bluez/hciN/dev_X`; readings older than ``readingLifetime`` no longer count), the
/// adapter holding a device's link, and the free slots per adapter. Output, per address: connect through an
/// adapter, stay, move (disconnect, then connect through another; only when the switch rule holds, never with
/// two links), or wait (no adapter that hears it has a free slot).
///
/// An adapter that goes down takes its readings and its links with it: its devices are placed again among
/// the others at their next decision.
///
/// ``SupervisorCore`` keeps one (its rule: `config.cluster.switchRule`, the same `switch_margin`/`switch_after`
/// between adapters as between bridges) and consults it when several adapters are in use: to place a new session
/// (``SupervisorCore/place(_:connectNow:now:tree:_:)``) and to move a connected one (``SupervisorCore/review(_:now:tree:_:)``).
package struct AdapterPlacement<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What to do with one device now.
    package enum Decision: Sendable, Equatable {
        /// No link: connect through this adapter.
        case connect(through: String)
        /// The link (or the coming connection) stays where it is.
        case stay(on: String)
        /// The switch rule holds: disconnect from `from`, then connect through `to`.
        case move(from: String, to: String)
        /// No adapter that hears the device has a free slot (or none hears it).
        case wait
    }

    /// How long a reading counts (the same 60 s as a cluster's sightings).
    package static var readingLifetime: Duration { .seconds(60) }

    package let rule: SwitchRule
    /// Adapters present and powered.
    package private(set) var up: Set<String> = []
    /// RSSI and time of the last reading, per address and adapter.
    package private(set) var readings: [String: [String: (rssi: Int, at: Instant)]] = [:]
    /// The adapter holding each address's link.
    package private(set) var links: [String: String] = [:]
    private var choices: [String: AdapterChoice<Instant>] = [:]

    package init(rule: SwitchRule) {
        self.rule = rule
    }

    /// An adapter came up (present and powered).
    package mutating func adapterUp(_ name: String) { up.insert(name) }

    /// An adapter was removed or powered off: its readings and links are gone; returns the addresses whose
    /// link it held (they reconnect through the others).
    @discardableResult
    package mutating func adapterDown(_ name: String) -> [String] {
        up.remove(name)
        for address in readings.keys { readings[address]?[name] = nil }
        let lost = links.filter { $0.value == name }.keys.sorted()
        for address in lost { links[address] = nil }
        return lost
    }

    /// `adapter` heard `address` at `rssi` (127, BlueZ's "no valid RSSI", is ignored).
    package mutating func heard(_ address: String, on adapter: String, rssi: Int, now: Instant) {
        guard rssi != 127 else { return }
        readings[address, default: [:]][adapter] = (rssi, now)
    }

    /// The link of `address` came up on `adapter`, or went down (`nil`).
    package mutating func link(_ address: String, on adapter: String?) {
        links[address] = adapter
    }

    /// Forgets a device (its session ended).
    package mutating func remove(_ address: String) {
        readings[address] = nil
        links[address] = nil
        choices[address] = nil
    }

    /// The current readings of `address` on adapters that are up.
    package func currentReadings(_ address: String, now: Instant) -> [String: Int] {
        var out: [String: Int] = [:]
        for (adapter, reading) in readings[address] ?? [:]
        where up.contains(adapter) && reading.at.advanced(by: Self.readingLifetime) > now {
            out[adapter] = reading.rssi
        }
        return out
    }

    /// Decides for `address` at `now`, with `freeSlots` per adapter (an adapter that is up but missing there
    /// has none; adapters not up are left out).
    package mutating func decide(_ address: String, freeSlots: [String: Int], now: Instant) -> Decision {
        let slots = Dictionary(uniqueKeysWithValues: up.map { ($0, freeSlots[$0] ?? 0) })
        let link = links[address].flatMap { up.contains($0) ? $0 : nil }
        var choice = choices[address] ?? AdapterChoice(rule: rule)
        let chosen = choice.choose(
            readings: currentReadings(address, now: now), freeSlots: slots, connectedOn: link, now: now)
        choices[address] = choice
        switch (link, chosen) {
        case (let from?, let to?) where from != to: return .move(from: from, to: to)
        case (let on?, _): return .stay(on: on)
        case (nil, let to?): return .connect(through: to)
        case (nil, nil): return .wait
        }
    }

    /// When a challenger that keeps qualifying would win for some device (to decide again then).
    package var nextDeadline: Instant? { choices.values.compactMap(\.nextDeadline).min() }
}
