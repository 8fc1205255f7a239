import BlueZ
import BridgeCore
import RuntimeCore

/// The answer of a `scan` request (SPEC §14): what the ``ScanCollector`` heard, each advertiser with what the
/// decoders, the profiles and the configuration say of it.
extension Supervisor {
    /// `data.devices` of the answer: one object per advertiser heard since `since` (one per address: several adapters
    /// hear the same device; the strongest report counts).
    func scanList(since: BridgeInstant) -> [JSONValue] {
        var strongest: [BluetoothAddress: ScanCollector.Heard] = [:]
        for heard in scanCollector.heard(since: since) {
            let address = heard.advertisement.address
            if let other = strongest[address], (other.advertisement.rssi ?? -999) >= (heard.advertisement.rssi ?? -999) { continue }
            strongest[address] = heard
        }
        var trackers = TrackerMatcher(config: ctx.config)
        return strongest.keys.sorted { $0.description < $1.description }.compactMap { address in
            strongest[address].map { scanEntry($0.advertisement, trackers: &trackers) }
        }
    }

    private func scanEntry(_ ad: BlueZAdvertisement, trackers: inout TrackerMatcher) -> JSONValue {
        let frame = AdvertisementFrame(
            address: ad.address, serviceData: ad.serviceData, manufacturerData: ad.manufacturerData, name: ad.name,
            serviceUUIDs: ad.serviceUUIDs)
        let claim = ad.serviceData.isEmpty && ad.manufacturerData.isEmpty
            ? nil : AdvertisementDecoder.claimAnyEntry(frame, bindkey: nil, families: ctx.advertisements.families)
        let profiles = ctx.config.profiles.values.filter {
            !$0.recognize.isEmpty
                && $0.recognize.matches(name: ad.name, serviceData: Array(ad.serviceData.keys), services: ad.serviceUUIDs)
        }.sorted { $0.id < $1.id }
        var configured: JSONValue = .null
        if let device = ctx.config.device(address: ad.address, name: ad.name) {
            configured = .string(ctx.topics.deviceSegment(address: ad.address, config: device))
        } else if let tracker = trackers.match(
            address: ad.address, isRandom: ad.addressType == .random, manufacturerData: ad.manufacturerData
        ).first {
            configured = .string(tracker)
        }
        var entry = JSONObject()
        entry.append("address", .string(ad.address.description))
        entry.append("address_type", .string(ad.addressType.rawValue))
        entry.append("name", ad.name.map { .string($0) } ?? .null)
        entry.append("rssi", ad.rssi.flatMap { $0 == 127 ? nil : JSONValue.integer(Int64($0)) } ?? .null)
        entry.append("services", .array(ad.serviceUUIDs.map { .string($0.shortForm) }))
        // BlueZ does not say whether an advertisement is connectable: a device that lists GATT services, or one no
        // broadcast decoder claims, is taken to be.
        entry.append("connectable", .bool(!ad.serviceUUIDs.isEmpty || claim == nil))
        entry.append("decoder", claim.map { .string($0.decoder) } ?? .null)
        entry.append(
            "manufacturer", (claim?.decoded?.manufacturer ?? profiles.first?.manufacturer).map { .string($0) } ?? .null)
        entry.append("model", (claim?.decoded?.model ?? profiles.first?.model).map { .string($0) } ?? .null)
        entry.append("encrypted", .bool(claim?.needsKey == true || claim?.decoded?.encrypted == true))
        entry.append("configured", configured)
        entry.append("profiles", .array(profiles.map { .string($0.id) }))
        return .object(entry)
    }
}
