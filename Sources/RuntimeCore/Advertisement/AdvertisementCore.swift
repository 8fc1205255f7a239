import BridgeCore
import Logging

/// The decisions of an advertisement device's session (SPEC §7; also an advertiser that
/// `bluetooth.advertisements: decodable` picked up), as a pure value: never connected, its availability follows its
/// advertisements. `online` from its first advertisement, `offline` when none came for `advertisement.timeout`;
/// commands are answered `not_connected` at once (there is no link to run them on); growing value names (or a maker or
/// model becoming known) are reported for Home Assistant discovery.
///
/// Packets are decoded, de-duplicated and published by the advertisement router on the I/O thread; the core is
/// handed what the router saw of the device (``Seen``) with each input, and reads no clock.
package struct AdvertisementCore<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// What the advertisement router saw of the device when the input came.
    package struct Seen: Sendable, Equatable {
        /// Its last advertisement.
        package var last: Instant?
        /// The router counts it online (an advertisement came since it last timed out).
        package var online: Bool

        /// What the router saw.
        package init(last: Instant?, online: Bool) {
            self.last = last
            self.online = online
        }
    }

    /// What the executor feeds the core.
    package enum Input: Sendable {
        /// The session starts.
        case start
        /// An advertisement brought the device online, or its decoded values have new names (with what they are).
        case advertised(HomeAssistantDiscovery.Advertised)
        /// A `/set` or `/get` of the device.
        case command(PendingCommand<Instant>)
        /// ``nextDeadline(_:)`` passed.
        case deadline
        /// The session ends.
        case stop
    }

    /// What the executor does, in order.
    package enum Action: Sendable {
        /// Publish `{base}/{device}/availability` (retained).
        case publishAvailability(Bool)
        /// Tell the supervisor.
        case report(SessionReport)
        /// Answer a command.
        case respond(PendingCommand<Instant>, CommandResult)
        /// The device timed out: the router counts it offline until its next advertisement.
        case markOffline
        /// A line for the session's log.
        case log(Logger.Level, String)
    }

    /// The device's address and topic segment (for the log and the answers).
    package let address: BluetoothAddress
    package let segment: String
    /// `advertisement.timeout` (600 s for a device `decodable` picked up).
    package let timeout: Duration
    /// The published availability.
    package private(set) var available = false
    /// How many value names were reported, and the maker and model reported.
    package private(set) var reportedValues = 0
    package private(set) var reportedModel: (manufacturer: String?, model: String?) = (nil, nil)

    /// A core for the device at `address` (`segment`), offline after `timeout` without an advertisement.
    package init(address: BluetoothAddress, segment: String, timeout: Duration) {
        self.address = address
        self.segment = segment
        self.timeout = timeout
    }

    /// The timeout of `policy` (`advertisement.timeout`; 600 s for any other policy: a device `decodable` picked up).
    package static func timeout(of policy: ConnectionPolicy) -> Duration {
        if case .advertisement(_, let timeout) = policy { return timeout }
        return .seconds(600)
    }

    /// When the device goes offline if no advertisement comes (nil while offline).
    package func nextDeadline(_ seen: Seen) -> Instant? {
        available ? seen.last?.advanced(by: timeout) : nil
    }

    /// Handles one input at `now`, with what the router saw of the device, and returns what to do, in order.
    package mutating func handle(_ input: Input, seen: Seen, now: Instant) -> [Action] {
        var out: [Action] = []
        switch input {
        case .start:
            // Offline until an advertisement counts (one of this scan, which the router may have seen already).
            if seen.online { setAvailable(true, &out) } else { out.append(.publishAvailability(false)) }
        case .advertised(let advertised):
            if seen.online && !available { setAvailable(true, &out) }
            if advertised.values.count > reportedValues || advertised.manufacturer != reportedModel.manufacturer
                || advertised.model != reportedModel.model
            {
                reportedValues = advertised.values.count
                reportedModel = (advertised.manufacturer, advertised.model)
                out.append(.report(.advertised(advertised)))
            }
        case .command(let command):
            out.append(.respond(command, command.failure(CommandError(
                .notConnected,
                "device '\(segment)' is an advertisement device (connection: advertisement): the bridge never connects to it"))))
        case .deadline:
            guard available, let last = seen.last, now >= last.advanced(by: timeout) else { break }
            out.append(.log(.notice, "\(address): no advertisement for \(timeout): offline"))
            out.append(.markOffline)
            setAvailable(false, &out)
        case .stop:
            if available {
                available = false
                out.append(.publishAvailability(false))
                out.append(.report(.availability(false)))
            }
        }
        return out
    }

    private mutating func setAvailable(_ value: Bool, _ out: inout [Action]) {
        available = value
        if value { out.append(.log(.info, "\(address): advertising: online")) }
        out.append(.publishAvailability(value))
        out.append(.report(.availability(value)))
    }
}
