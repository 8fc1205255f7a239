/// Which configured tracker (SPEC §12), if any, an advertisement comes from: by address, by iBeacon identity, or by
/// resolving a random address against the configured IRKs (``IdentityResolver``, cached). Only configured trackers
/// ever match: an advertiser that is none of them gives an empty result, whatever it advertises.
///
/// The runtime calls ``match(address:isRandom:manufacturerData:)`` for every advertisement report (data or RSSI
/// only: BlueZ's `ManufacturerData` holds the last data seen, so an iBeacon keeps matching on RSSI-only reports) and
/// feeds each tracker it names, with the report's RSSI, to ``PresenceCore``.
public struct TrackerMatcher: Sendable {
    /// The configured trackers, in file order.
    public let trackers: [BridgeConfig.Tracker]
    private var byAddress: [BluetoothAddress: [String]] = [:]
    private var byBeacon: [IBeacon.Identity: [String]] = [:]
    /// For each key of ``resolver``, the tracker names using it.
    private var byKey: [[String]] = []
    /// The IRK resolver and its cache of answers.
    public private(set) var resolver: IdentityResolver

    /// Creates a matcher for the configured trackers.
    /// - Parameter cacheCapacity: the most random addresses whose resolution is remembered.
    public init(trackers: [BridgeConfig.Tracker], cacheCapacity: Int = 4096) {
        self.trackers = trackers
        var keys: [IdentityResolvingKey] = []
        var names: [[String]] = []
        for tracker in trackers {
            switch tracker.match {
            case .address(let address): byAddress[address, default: []].append(tracker.name)
            case .iBeacon(let identity): byBeacon[identity, default: []].append(tracker.name)
            case .irk(let key):
                if let index = keys.firstIndex(of: key) {
                    names[index].append(tracker.name)
                } else {
                    keys.append(key)
                    names.append([tracker.name])
                }
            }
        }
        byKey = names
        resolver = IdentityResolver(keys: keys, capacity: cacheCapacity)
    }

    /// Creates a matcher for `config.trackers`.
    public init(config: BridgeConfig) {
        self.init(trackers: config.trackers)
    }

    /// Whether any tracker is configured (without one the runtime need not call ``match(address:isRandom:manufacturerData:)``).
    public var isEmpty: Bool { trackers.isEmpty }

    /// The names of the trackers this advertisement comes from (usually none or one), in the order address,
    /// iBeacon, IRK.
    /// - Parameters:
    ///   - address: the advertiser's address as BlueZ reports it.
    ///   - isRandom: BlueZ's `AddressType` is `random` (only random addresses can be resolvable private addresses).
    ///   - manufacturerData: BlueZ's `ManufacturerData` (company id → bytes).
    public mutating func match(address: BluetoothAddress, isRandom: Bool, manufacturerData: [UInt16: [UInt8]]) -> [String] {
        var result: [String] = []
        if let names = byAddress[address] { result += names }
        if !byBeacon.isEmpty, let beacon = IBeacon(manufacturerData: manufacturerData),
            let names = byBeacon[beacon.identity]
        {
            result += names
        }
        if let index = resolver.resolve(address, isRandom: isRandom) { result += byKey[index] }
        return result
    }
}
