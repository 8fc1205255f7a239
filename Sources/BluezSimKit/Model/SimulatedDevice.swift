import BridgeBase

/// The link state of a simulated device.
public enum ConnectionState: Sendable, Equatable {
    /// No link.
    case disconnected
    /// `Connect` is waiting for the link.
    case connecting
    /// Linked (`Connected` is true).
    case connected
    /// `Disconnect` is tearing the link down.
    case disconnecting
}

/// One peripheral of the scenario and the BlueZ device object that represents it on its adapter.
///
/// The peripheral side (in range, GATT database, values) exists for the whole run; the device
/// object (`/org/bluez/hciX/dev_...`) exists once discovery saw the peripheral, a `ConnectDevice`
/// reached it, or the scenario marks it known, until `RemoveDevice` or the temporary-device timeout.
/// Confined to the ``Simulator`` actor.
final class SimulatedDevice {
    let spec: PeripheralSpec
    let adapterPath: String
    let path: String
    let gatt: GattDatabase

    /// The peripheral is in radio range: it advertises and accepts connections.
    var inRange: Bool
    /// The Device1 object is exported.
    var exported = false
    /// BlueZ's temporary flag: never connected nor paired; removed when unseen for a while.
    var temporary = true
    var paired: Bool
    /// The bond's key is authenticated (passkey entry or numeric comparison; Just Works is not).
    var bondAuthenticated = false
    /// `Paired` was stored but not signalled yet: bluetoothd signals it once services resolved
    /// (`pending_paired`).
    var pendingPaired = false
    /// The peripheral lost its half of the bond (control `ForgetBond`): the next encryption with
    /// the stored key fails (PIN or Key Missing) and the link drops.
    var peripheralForgotBond = false
    var connection: ConnectionState = .disconnected
    /// Bumped whenever a connection attempt or link ends, so stale continuations give up.
    var linkGeneration: UInt64 = 0
    var servicesResolved = false
    /// The GATT objects are exported (they stay across disconnects: BlueZ's `Cache = always`).
    var gattExported = false
    /// Current RSSI of the random walk.
    var rssi: Int16
    /// The mean of the walk: the scenario's RSSI at this adapter, changed by control `SetRSSI`
    /// (127: "not available", every advertisement reports 127).
    var meanRSSI: Int16
    var random: SplitMix64
    /// The `RSSI` property is present (it is invalidated when discovery stops).
    var hasRSSIProperty = false
    /// Service data of its advertisements: the scenario's, replaced by each broadcast packet.
    var serviceData: [String: [UInt8]]
    /// Broadcast packets sent so far.
    var broadcastCount: UInt32 = 0
    /// Manufacturer data of its advertisements: the scenario's, updated by each replayed frame.
    var manufacturerData: [UInt16: [UInt8]]
    /// Service UUIDs advertised so far (BlueZ adds those of each report to `UUIDs`).
    var advertisedUUIDs: [String]
    /// The name its advertisements carry now: the replayed frame's, else the scenario's `name`.
    var advertisedName: String?
    /// The replayed frame advertised last (scenario `replay`); -1 before the first.
    var replayIndex = -1
    /// Last time an advertisement was reported.
    var lastSeen: ContinuousClock.Instant?
    /// When the next advertisement is due while its adapter discovers.
    var nextAdvertisement: ContinuousClock.Instant?
    /// Services were resolved once: BlueZ remembers them, `UUIDs` lists them even before a connection.
    var servicesKnown = false
    /// Armed connection failures (control `FailNextConnect`).
    var connectFault: ConnectFault?
    /// How services resolve after a connection (control `SetResolveBehaviour`).
    var resolveBehaviour: ResolveBehaviour = .normal
    /// Counters for `GetStats`.
    var stats = DeviceStats()
    /// `Device1.Name` now: the advertised name, or the GAP name read over GATT after a resolve
    /// (until the next advertisement).
    var currentName: String?
    /// Bumped whenever the GATT objects are removed, so an export in progress stops.
    var gattEpoch: UInt64 = 0
    /// What requests still waiting for the peripheral get when the link drops.
    var linkLossError = BluezError.operationFailed
    /// While a pairing attempt for an encrypted characteristic runs: when it fails (the link drops).
    var pairingUntil: ContinuousClock.Instant?
    /// `org.bluez.Battery1` is on the device object.
    var batteryExported = false
    /// This device object's link holds the peripheral in the ``LinkRegistry``.
    var holdsLink = false
    /// A private address the peripheral no longer uses (scenario `irk`): it never advertises again, and its object
    /// goes like a temporary device's.
    var retired = false
    /// The state of its exchange rules (scenario `exchanges`): rules with `when.state` match only in it.
    var exchangeState: String

    init(spec: PeripheralSpec, adapterPath: String, settings: ScenarioSettings, genericAttributeService: Bool) {
        self.spec = spec
        self.adapterPath = adapterPath
        self.path = BlueZNames.devicePath(adapter: adapterPath, address: spec.address)
        self.gatt = GattDatabase(spec: spec, devicePath: path, genericAttributeService: genericAttributeService,
                                 seed: settings.seed)
        self.inRange = spec.inRange
        self.exchangeState = spec.exchanges?.initialState ?? ""
        self.paired = spec.paired
        self.rssi = spec.rssi
        self.meanRSSI = spec.rssi
        self.advertiseWhileConnected = spec.advertiseWhileConnected ?? settings.advertiseWhileConnected
        self.currentName = spec.name
        self.random = SplitMix64(seed: settings.seed, text: "rssi" + spec.address)
        self.serviceData = spec.serviceData
        self.manufacturerData = spec.manufacturerData
        self.advertisedUUIDs = spec.advertisedServices
        self.advertisedName = spec.name
        if let broadcast = spec.broadcast {
            let frame = BroadcastFrames.frame(broadcast, packet: 0, address: spec.address)
            serviceData[frame.uuid] = frame.bytes
        }
    }

    /// What the bond gives the link: bluetoothd 5.66 asks for `BT_IO_SEC_MEDIUM` when it connects a
    /// paired device, so the link is encrypted with the stored key from the start.
    var bondLevel: SecurityLevel {
        guard paired else { return .none }
        return bondAuthenticated ? .authenticated : .encrypted
    }

    /// The adapter's name (`hci0`).
    var adapterName: String {
        String(adapterPath.split(separator: "/").last ?? "")
    }

    /// The peripheral keeps advertising while it has a link (scenario `advertise_while_connected`).
    var advertiseWhileConnected: Bool

    /// The alias BlueZ shows: the name, else the address with dashes.
    var alias: String {
        currentName ?? String(spec.address.map { $0 == ":" ? "-" : $0 })
    }

    /// The next RSSI of a bounded random walk around the scenario's mean.
    func nextRSSI() -> Int16 {
        // 127 means "RSSI not available" (HCI); btvirt reports it for every advertisement.
        if meanRSSI == 127 { return 127 }
        let step = Int16(Int(random.next() % 7) - 3)
        let mean = meanRSSI
        var v = rssi &+ step
        v = min(mean + 8, max(mean - 8, v))
        rssi = v
        return v
    }

    /// Takes frame `index` of the scenario's `replay` as what the peripheral advertises now: its
    /// service and manufacturer data replace the entries of the same UUIDs and company ids (BlueZ
    /// keeps the others), or with `duplicateData` (a discovery client asked for `DuplicateData`:
    /// bluetoothd clears each kind of data a report carries before adding the report's, see
    /// Tests/realbluez/README.md) the whole `ServiceData` / `ManufacturerData` the frame carries;
    /// its UUIDs add to the advertised ones, its name (else the scenario's) is the advertised name.
    func applyReplayFrame(_ index: Int, duplicateData: Bool = false) {
        guard spec.replay.indices.contains(index) else { return }
        let frame = spec.replay[index]
        replayIndex = index
        if duplicateData, !frame.serviceData.isEmpty { serviceData = [:] }
        if duplicateData, !frame.manufacturerData.isEmpty { manufacturerData = [:] }
        for (uuid, bytes) in frame.serviceData { serviceData[uuid] = bytes }
        for (company, bytes) in frame.manufacturerData { manufacturerData[company] = bytes }
        for uuid in frame.uuids where !advertisedUUIDs.contains(uuid) { advertisedUUIDs.append(uuid) }
        advertisedName = frame.name ?? spec.name
    }

    /// What a discovery filter or an advertisement monitor sees of the peripheral now: the scenario's
    /// description with the replayed frame's name, UUIDs and manufacturer data.
    var advertisedSpec: PeripheralSpec {
        guard !spec.replay.isEmpty else { return spec }
        var s = spec
        s.name = advertisedName
        s.advertisedServices = advertisedUUIDs
        s.manufacturerData = manufacturerData
        return s
    }

    /// Time between two of its advertisements: a broadcast's interval, else the scenario's
    /// `advertising_interval`; nil: the scenario's `rssi_interval`.
    var ownAdvertisingInterval: Duration? {
        spec.broadcast?.interval ?? spec.advertisingInterval
    }

    /// The `Device1.UUIDs` value: advertised services, plus every resolved service once connected.
    var uuids: [String] {
        var set = Set(advertisedUUIDs)
        if gattExported || servicesKnown { set.formUnion(gatt.resolvedUUIDs) }
        return set.sorted()
    }
}

/// A local adapter and its discovery sessions. Confined to the ``Simulator`` actor.
final class SimulatedAdapter {
    let spec: AdapterSpec
    let path: String
    var powered: Bool
    /// Unique names of clients with a discovery session.
    var discoveryClients: Set<String> = []
    /// Discovery filters by client.
    var filters: [String: DiscoveryFilter] = [:]
    /// Bumped on every start/stop of discovery.
    var discoveryGeneration: UInt64 = 0
    var discovering = false
    /// The adapter object is exported (false after control `RemoveAdapter`).
    var present = true
    /// The discovery of this generation reports nothing (control `StallDiscovery`).
    var stalledGeneration: UInt64?
    /// The next discovery stalls from its start.
    var stallNextDiscovery = false
    /// `StartDiscovery` calls that started a session.
    var discoveryStarts: UInt64 = 0
    /// Registered advertisement monitor applications, by "<sender> <root>".
    var monitorApps: [String: AdvertisementMonitorApp] = [:]
    /// Bumped when monitoring starts or ends.
    var monitorGeneration: UInt64 = 0

    init(spec: AdapterSpec) {
        self.spec = spec
        self.path = BlueZNames.adapterPath(spec.name)
        self.powered = spec.powered
    }

    /// Whether a discovering client's filter asked for `DuplicateData` (bluetoothd's
    /// `filter_duplicate_data`: a client without a filter does not count).
    var duplicateData: Bool { discoveryClients.contains { filters[$0]?.duplicateData == true } }

    /// True when an advertisement of `device` at `rssi` passes the merged filter of the
    /// discovering clients (any client without a filter sees everything).
    func accepts(_ device: PeripheralSpec, rssi: Int16) -> Bool {
        for client in discoveryClients {
            guard let f = filters[client] else { return true }
            if f.matches(device, rssi: rssi) { return true }
        }
        return false
    }
}
