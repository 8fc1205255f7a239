import BridgeBase
import Glibc

/// Devices with privacy (scenario `irk`): a phone or watch advertising from a resolvable private address that
/// changes every `rotate_every`, as BlueZ shows one: each new address is a new `Device1` object (AddressType
/// `random`), and the old object, no longer advertising, is removed `temporary_timeout` after its last
/// advertisement, like BlueZ's temporary devices (here also while the adapter discovers: the old address never
/// comes back).
///
/// The address of each period is a pure function of the key, the identity address and the wall-clock period
/// number (`unix time / rotate_every`), so that two simulators sharing a `--link-dir` (two bridges' radios) show
/// the same phone at the same address at the same time.
extension Simulator {
    /// The wall clock in nanoseconds since the Unix epoch.
    static func unixNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// The rotation period number at `unixNanoseconds`.
    static func rotationSlot(every: Duration, unixNanoseconds: Int64) -> Int64 {
        let period = max(1, Int64(clamping: DurationText.nanoseconds(every)))
        return unixNanoseconds / period
    }

    /// The resolvable private address a device with an `irk` advertises from in period `slot` (uppercase
    /// `AA:BB:...`), `nil` without a key.
    static func privateAddress(_ spec: PeripheralSpec, slot: Int64) -> String? {
        guard let irk = spec.irk else { return nil }
        var random = SplitMix64(seed: UInt64(bitPattern: slot), text: "rpa " + spec.controlAddress)
        return irk.resolvablePrivateAddress(prand: PrivacyKey.prand(random: UInt32(truncatingIfNeeded: random.next())))?.description
    }

    /// `spec` as it advertises at `unixNanoseconds`: for a device with an `irk`, the period's private address, the
    /// scenario's address kept as ``PeripheralSpec/identity``; any other spec unchanged.
    static func advertisedSpec(_ spec: PeripheralSpec, unixNanoseconds: Int64) -> PeripheralSpec {
        guard spec.irk != nil else { return spec }
        var placed = spec
        placed.identity = spec.controlAddress
        let slot = rotationSlot(every: spec.rotateEvery, unixNanoseconds: unixNanoseconds)
        if let address = privateAddress(placed, slot: slot) { placed.address = address }
        return placed
    }

    /// How long until the next device with an `irk` changes its address; nil when there is none.
    func untilNextRotation() -> Duration? {
        let now = Self.unixNanoseconds()
        var soonest: Int64?
        for path in deviceOrder {
            guard let d = devices[path], d.spec.irk != nil, !d.retired else { continue }
            let period = max(1, Int64(clamping: DurationText.nanoseconds(d.spec.rotateEvery)))
            let next = (Self.rotationSlot(every: d.spec.rotateEvery, unixNanoseconds: now) + 1) * period
            soonest = min(soonest ?? next, next)
        }
        return soonest.map { .nanoseconds($0 - now) }
    }

    /// Gives every device with an `irk` whose period ended its new address: a successor device object (not exported
    /// until it advertises), the old one retired (silent, removed by ``sweepTemporaryDevices()``).
    func rotateAddresses() {
        let now = Self.unixNanoseconds()
        for path in deviceOrder {
            guard let d = devices[path], d.spec.irk != nil, !d.retired else { continue }
            let spec = Self.advertisedSpec(d.spec, unixNanoseconds: now)
            guard spec.address != d.spec.address else { continue }
            let successor = SimulatedDevice(
                spec: spec, adapterPath: d.adapterPath, settings: settings, genericAttributeService: options.genericAttributeService)
            guard devices[successor.path] == nil else { continue }
            successor.inRange = d.inRange
            successor.meanRSSI = d.meanRSSI
            successor.rssi = d.rssi
            d.retired = true
            devices[successor.path] = successor
            if let index = deviceOrder.firstIndex(of: path) { deviceOrder.insert(successor.path, at: index + 1) }
            logger.info("private address rotated", metadata: [
                "identity": "\(spec.controlAddress)", "old": "\(d.spec.address)", "new": "\(spec.address)", "adapter": "\(d.adapterName)",
            ])
            if !d.exported { forgetRetired(d) }
        }
    }

    /// The address the peripheral named `address` (its identity address for a device with an `irk`) advertises
    /// from now, on its first adapter.
    func advertisedAddress(of address: String) -> String? {
        devicesWith(address: address).first { !$0.retired }?.spec.address
    }

    /// Drops a retired device for good (its address never comes back); only once it has no link.
    func forgetRetired(_ d: SimulatedDevice) {
        guard d.retired, !d.exported, d.connection == .disconnected, !d.holdsLink else { return }
        devices[d.path] = nil
        deviceOrder.removeAll { $0 == d.path }
    }
}
