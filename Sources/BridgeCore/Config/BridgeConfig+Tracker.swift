extension BridgeConfig {
    /// One entry of `trackers` (SPEC §12): a phone, watch, tag or beacon whose presence is published on
    /// `{base}/{name}/presence`. A tracker is never connected.
    public struct Tracker: Sendable, Hashable {
        /// How the tracker's advertisements are recognised: exactly one of the three.
        public enum Match: Sendable, Hashable, CustomStringConvertible {
            /// `match: { address: "C8:12:34:56:78:9A" }`: a fixed (public or static random) address.
            case address(BluetoothAddress)
            /// `match: { ibeacon: "uuid:major:minor" }`: Apple's iBeacon manufacturer data.
            case iBeacon(IBeacon.Identity)
            /// `match: { irk: "<32 hex digits>" }`: any resolvable private address of this key.
            case irk(IdentityResolvingKey)

            /// `address C8:...`, `ibeacon uuid:major:minor` or `irk` (never the key itself).
            public var description: String {
                switch self {
                case .address(let address): return "address \(address)"
                case .iBeacon(let identity): return "ibeacon \(identity)"
                case .irk: return "irk"
                }
            }
        }

        /// `name`: the topic segment (`{base}/{name}/presence`) and the Home Assistant entity's name.
        public var name: String
        /// `match`.
        public var match: Match
        /// `away_after` (default 2 minutes): `not_home` when nothing was heard for this long.
        public var awayAfter: Duration

        /// The default `away_after`.
        public static let defaultAwayAfter = Duration.seconds(120)

        /// Creates an entry.
        public init(name: String, match: Match, awayAfter: Duration = Tracker.defaultAwayAfter) {
            self.name = name
            self.match = match
            self.awayAfter = awayAfter
        }
    }
}
