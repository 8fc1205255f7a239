import BlueZ
import BridgeCore
import RuntimeCore
import Logging
import Synchronization

/// The advertisement hot path (SPEC §7): BlueZ's `Device1` changes of `ServiceData`,
/// `ManufacturerData` and `RSSI` arrive here from the I/O thread, as characteristic values do;
/// each new packet of an advertisement device is decoded and published on
/// `{base}/{device}/advertisement`, once.
///
/// One lock, one dictionary lookup per advertisement. What is not a new packet (an RSSI-only
/// report, the same packet id of a decoder again, the same data again) only refreshes the
/// device's last-seen time. Frames a decoder rejects (wrong MIC, a counter that does not
/// increase, a malformed object) are counted and logged at debug level, never published.
/// An encrypted frame without a key (SPEC §13) is published with `"encrypted": true` and no
/// values for a configured device (the log says once that it needs a `bindkey`), and dropped for
/// an advertiser `advertisements: decodable` picked up. The session of the
/// device hears from here only when something changes for it: it came back online, or a value
/// name appeared that Home Assistant does not know yet.
final class AdvertisementRouter: Sendable {
    /// One advertisement device.
    struct Route: Sendable {
        var segment: String
        var topic: String
        var bindkey: [UInt8]?
        var mailbox: Mailbox<SessionInput>
        /// Whether a `devices` entry names the device (else `advertisements: decodable` picked
        /// it up): its frames that need a key are published as `encrypted`, not dropped.
        var configured = true
        var replay = BTHomeReplayGuard()
        /// The last packet published with a packet id, per decoder: a device that rotates
        /// advertisement sets (BlueZ then alternates its `ServiceData`) must not have each set's
        /// packet published again after the other's.
        var lastPackets: [String: PacketKey] = [:]
        /// The last frame published without a packet id (any decoder, or none): a frame is new
        /// when its bytes differ from it (SPEC §13: frames A, B, A publish all three).
        var lastData: PacketKey?
        /// Whether the log said that the device needs a `bindkey` (once).
        var toldKey = false
        /// The manufacturer data of the last data report: BlueZ keeps an entry for every company
        /// id it has seen, and the families whose "company id" is data (ThermoPro, Inkbird,
        /// SensorPush) are read from the entries the report changed.
        var lastManufacturerData: [UInt16: [UInt8]] = [:]
        var lastSeen: BridgeInstant?
        var online = false
        var rssi: Int?
        /// Frames rejected by a decoder or the replay guard.
        var rejected: UInt64 = 0
        /// The names of the decoded values seen so far, with a sample value.
        var values: [String: JSONValue] = [:]
        var decoder: String?
        /// The maker and model the decoder named (SPEC §13), for Home Assistant.
        var manufacturer: String?
        var model: String?
    }

    /// What makes a packet new: its decoder's packet id, else its data.
    enum PacketKey: Hashable, Sendable {
        case id(decoder: String, Int)
        case data([BluetoothUUID: [UInt8]], [UInt16: [UInt8]])
    }

    private let routes = Mutex<[String: Route]>([:])
    private let values: ValueRouter
    private let clock: any BridgeClock
    private let logger: Logger
    /// The families asked after BTHome and the 181a formats: ``AdvertisementDecoder/families``
    /// but in tests, which add their own.
    let families: [any AdvertisementFamily.Type]

    init(
        values: ValueRouter, clock: any BridgeClock, logger: Logger,
        families: [any AdvertisementFamily.Type] = AdvertisementDecoder.families
    ) {
        self.values = values
        self.clock = clock
        self.logger = logger
        self.families = families
    }

    func setRoute(path: String, _ route: Route) { routes.withLock { $0[path] = route } }

    func removeRoute(path: String) { routes.withLock { $0[path] = nil } }

    /// When the device's last advertisement arrived, and whether it counts as online.
    func seen(path: String) -> (last: BridgeInstant?, online: Bool) {
        routes.withLock { ($0[path]?.lastSeen, $0[path]?.online ?? false) }
    }

    /// The device timed out: its next advertisement brings it back (and tells its session).
    func markOffline(path: String) { routes.withLock { $0[path]?.online = false } }

    /// The RSSI of the device's last advertisement.
    func rssi(path: String) -> Int? { routes.withLock { $0[path]?.rssi } }

    /// Frames of the device rejected so far.
    func rejected(path: String) -> UInt64 { routes.withLock { $0[path]?.rejected ?? 0 } }

    /// When an advertisement of any advertisement device last came (the scan watchdog's sign of
    /// life, as these reports do not reach the supervisor).
    var lastAdvertisement: BridgeInstant? { lastAny.withLock { $0 } }
    private let lastAny = Mutex<BridgeInstant?>(nil)

    /// Any other device's advertisement: the scan is alive (``lastAdvertisement``).
    func noteScanAlive() {
        let now = clock.now
        lastAny.withLock { $0 = now }
    }

    /// What ``handle(_:)`` needs of a route outside the lock (no copy of the whole route).
    private struct Target {
        var topic: String
        var segment: String
        var bindkey: [UInt8]?
        var mailbox: Mailbox<SessionInput>
        var configured: Bool
        var cameOnline: Bool
        var firstPacket: Bool
        /// The manufacturer data of the report before this one.
        var previousManufacturerData: [UInt16: [UInt8]]
    }

    /// An advertisement from BlueZ; false when it is not an advertisement device's.
    ///
    /// The routes are changed in place under the lock (`Dictionary.Values` subscript): a copy of
    /// a route would copy its packet and value dictionaries on the first write, once per
    /// advertisement.
    @discardableResult
    func handle(_ ad: BlueZAdvertisement) -> Bool {
        let now = clock.now
        guard
            let target = routes.withLock({ all -> Target? in
                guard let i = all.index(forKey: ad.path) else { return nil }
                let came = !all.values[i].online
                all.values[i].online = true
                all.values[i].lastSeen = now
                if let rssi = ad.rssi, rssi != 127 { all.values[i].rssi = rssi }
                let r = all.values[i]
                if ad.dataChanged { all.values[i].lastManufacturerData = ad.manufacturerData }
                return Target(
                    topic: r.topic, segment: r.segment, bindkey: r.bindkey, mailbox: r.mailbox, configured: r.configured,
                    cameOnline: came, firstPacket: r.lastPackets.isEmpty && r.lastData == nil,
                    previousManufacturerData: r.lastManufacturerData)
            })
        else { return false }
        lastAny.withLock { $0 = now }
        if target.cameOnline { target.mailbox.send(.advertised) }
        guard ad.dataChanged || target.firstPacket, !(ad.serviceData.isEmpty && ad.manufacturerData.isEmpty) else {
            return true
        }
        let frame = AdvertisementFrame(
            address: ad.address, serviceData: ad.serviceData, manufacturerData: ad.manufacturerData, name: ad.name,
            serviceUUIDs: ad.serviceUUIDs)
        var decoded: DecodedAdvertisement?
        // The decoder of an encrypted frame no key opens (a configured device: published without values).
        var locked: String?
        var claim = AdvertisementDecoder.claim(frame, bindkey: target.bindkey, families: families)
        if ad.manufacturerData.count > 1, claim?.decoded == nil, claim?.needsKey != true,
           let fresh = Self.changedEntries(ad.manufacturerData, since: target.previousManufacturerData)
        {
            // BlueZ's entries of every company id seen so far: the frame is what this report changed.
            var latest = frame
            latest.manufacturerData = fresh
            if let retry = AdvertisementDecoder.claim(latest, bindkey: target.bindkey, families: families),
               retry.decoded != nil || retry.needsKey
            {
                claim = retry
            }
        }
        if let claim {
            switch claim.result {
            case .success(let d):
                decoded = d
            case .failure(.encryptedWithoutKey) where target.configured:
                locked = claim.decoder
            case .failure(let error):
                routes.withLock { $0[ad.path]?.rejected &+= 1 }
                logger.debug("\(ad.address): advertisement dropped (\(claim.decoder)): \(error)")
                return true
            }
        }
        let key: PacketKey = decoded.flatMap { d in d.packetID.map { .id(decoder: d.decoder, $0) } }
            ?? .data(ad.serviceData, ad.manufacturerData)
        enum Verdict { case publish(newValues: Bool, tellKey: Bool), repeated, replayed }
        let verdict = routes.withLock { all -> Verdict in
            guard let i = all.index(forKey: ad.path) else { return .repeated }
            // BlueZ 5.66 with DuplicateData signals every report, also the same frame again:
            // a repeat is not a replay.
            if case .id = key {
                guard all.values[i].lastPackets[decoded?.decoder ?? ""] != key else { return .repeated }
            } else {
                guard all.values[i].lastData != key else { return .repeated }
            }
            if let d = decoded, d.encrypted, let counter = d.counter,
               !all.values[i].replay.accept(counter: counter, bits: d.counterBits)
            {
                all.values[i].rejected &+= 1
                return .replayed
            }
            if case .id = key { all.values[i].lastPackets[decoded?.decoder ?? ""] = key } else { all.values[i].lastData = key }
            var newValues = false
            var tellKey = false
            if let d = decoded {
                if all.values[i].decoder != d.decoder { all.values[i].decoder = d.decoder }
                if let m = d.manufacturer, all.values[i].manufacturer != m {
                    all.values[i].manufacturer = m
                    newValues = true
                }
                if let m = d.model, all.values[i].model != m {
                    all.values[i].model = m
                    newValues = true
                }
                for member in d.values where all.values[i].values[member.key] == nil {
                    all.values[i].values[member.key] = member.value
                    newValues = true
                }
            } else if let locked {
                if all.values[i].decoder != locked { all.values[i].decoder = locked }
                tellKey = !all.values[i].toldKey
                all.values[i].toldKey = true
            }
            return .publish(newValues: newValues, tellKey: tellKey)
        }
        switch verdict {
        case .repeated:
            break
        case .replayed:
            logger.debug("\(ad.address): encrypted \(decoded?.decoder ?? "") frame with a counter that did not increase: dropped")
        case .publish(let newValues, let tellKey):
            if tellKey, let locked {
                logger.warning(
                    "\(target.segment) (\(ad.address)): its \(locked) advertisements are encrypted: configure its advertisement bindkey to read them")
            }
            // Resendable, like a characteristic's value: Home Assistant's "last values again" after
            // a config gives an entity created after this packet its state (a sensor that
            // advertises rarely would stay unknown until its next packet).
            values.publish(
                topic: target.topic, payload: Self.payload(ad, decoded, lockedBy: locked), device: target.segment, at: now)
            if newValues { target.mailbox.send(.advertised) }
        }
        return true
    }

    /// The entries of `current` that are new or changed since `previous`; nil when none is, or
    /// all are (nothing to tell apart).
    static func changedEntries(_ current: [UInt16: [UInt8]], since previous: [UInt16: [UInt8]]) -> [UInt16: [UInt8]]? {
        var fresh: [UInt16: [UInt8]] = [:]
        for (id, bytes) in current where previous[id] != bytes { fresh[id] = bytes }
        return fresh.isEmpty || fresh.count == current.count ? nil : fresh
    }

    /// The advertisement payload (SPEC §7, §13); `lockedBy`: the decoder of an encrypted frame no key opens.
    static func payload(_ ad: BlueZAdvertisement, _ decoded: DecodedAdvertisement?, lockedBy: String? = nil) -> [UInt8] {
        AdvertisementPayload.make(
            rssi: ad.rssi, decoded: decoded, lockedBy: lockedBy, serviceData: ad.serviceData,
            manufacturerData: ad.manufacturerData)
    }

    /// What the device's advertisements decoded to so far (Home Assistant discovery): the
    /// decoder, the value names seen with a sample each, the maker and model.
    func advertised(path: String) -> HomeAssistantDiscovery.Advertised {
        routes.withLock { all in
            guard let r = all[path] else { return HomeAssistantDiscovery.Advertised(decoder: nil, values: [:]) }
            return HomeAssistantDiscovery.Advertised(
                decoder: r.decoder, values: r.values, manufacturer: r.manufacturer, model: r.model)
        }
    }
}
