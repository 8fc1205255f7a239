import BridgeBase

/// A simulation scenario: adapters, peripherals and timings (loaded from YAML by ``ScenarioLoader``).
///
/// The YAML format is documented at the top of `scripts/sim/demo.yaml`.
public struct Scenario: Sendable {
    /// Global timings and behaviour switches.
    public var settings: ScenarioSettings
    /// The local adapters (`/org/bluez/hci0`, ...); at least one.
    public var adapters: [AdapterSpec]
    /// The peripherals in radio range (after `count` expansion).
    public var devices: [PeripheralSpec]

    /// Creates a scenario.
    public init(settings: ScenarioSettings = ScenarioSettings(), adapters: [AdapterSpec], devices: [PeripheralSpec]) {
        self.settings = settings
        self.adapters = adapters
        self.devices = devices
    }
}

/// Global timings and behaviour switches of a scenario (`settings:`).
public struct ScenarioSettings: Sendable {
    /// From discovery start until a device's first advertisement is reported.
    public var advertiseDelay: Duration = .milliseconds(150)
    /// Extra random delay (0...jitter) added per device to `advertiseDelay`.
    public var advertiseJitter: Duration = .milliseconds(100)
    /// How often advertisements (RSSI updates) are reported while discovering.
    public var rssiInterval: Duration = .seconds(1)
    /// A never-connected ("temporary") device object is removed when it has not been seen for this long
    /// and its adapter is not discovering (BlueZ's TemporaryTimeout, 30 s).
    public var temporaryTimeout: Duration = .seconds(30)
    /// From `Connect` until `Connected` becomes true (and `Connect` returns): 0.55 s, what BlueZ 5.66
    /// took on a quiet machine (realbluez VM).
    public var connectDelay: Duration = .milliseconds(550)
    /// From `Connected` until `ServicesResolved` becomes true at the first connection of a device
    /// (full discovery; BlueZ 5.66: 1.2 s).
    public var resolveDelay: Duration = .milliseconds(1200)
    /// From `Connected` until `ServicesResolved` becomes true when the GATT objects are cached from an
    /// earlier connection (BlueZ 5.66: 0.4-0.5 s).
    public var resolveDelayCached: Duration = .milliseconds(450)
    /// At a first resolve, the GATT objects follow `ServicesResolved: true`, one `InterfacesAdded` per
    /// object in handle order, spread evenly over this time (BlueZ 5.66: the first 36 ms, the last
    /// 0.9 s after `ServicesResolved`).
    public var gattExportTime: Duration = .milliseconds(300)
    /// Export every GATT object at once *before* `ServicesResolved: true` (the order BlueZ shows under
    /// load, and the simulator's behaviour before it mirrored the quiet-machine order).
    public var gattObjectsFirst: Bool = false
    /// Emit `PropertiesChanged {Connected: true}` when `Connect`/`ConnectDevice` succeeds. BlueZ 5.66
    /// does not (the property is true, but no signal); true restores the old simulator behaviour.
    public var signalConnected: Bool = false
    /// From `Disconnect` until the device is disconnected (and `Disconnect` returns). BlueZ 5.66 waits
    /// for its `DISCONNECT_TIMER` (2 s, device.c) before it asks the controller to disconnect; the
    /// realbluez VM took 2.5 s in all (the rest is TCG-slow HCI).
    public var disconnectDelay: Duration = .seconds(2)
    /// Reading or writing a characteristic that needs encryption on a device without a bond: the
    /// pairing attempt fails and the link drops after this long (BlueZ 5.66: 0.3-2.5 s).
    public var pairingFailureDelay: Duration = .milliseconds(300)
    /// How long a pairing waits for the agent's answer before it fails: the kernel's SMP timeout
    /// (30 s, `SMP_TIMEOUT`) ends it before bluetoothd's own agent timeout (60 s): the link drops
    /// and `Pair` fails with `AuthenticationCanceled`.
    public var pairingTimeout: Duration = .seconds(30)
    /// How long a connection attempt to a peripheral that is not in range takes to fail.
    public var connectTimeout: Duration = .seconds(5)
    /// The ATT MTU reported by `GattCharacteristic1.MTU`.
    public var mtu: UInt16 = 247
    /// BlueZ 5.66 sends `WriteValue` with `type: command` as a Write Command whatever the Flags say and
    /// replies success. When false (the default) the peripheral applies such a command to a characteristic
    /// it may write (like BlueZ's example peripheral); when true it drops commands to characteristics
    /// without `write-without-response` (the reply is still success: a command has no response).
    public var strictWriteCommand: Bool = false
    /// Seed of every pseudo-random value (RSSI walks, generators).
    public var seed: UInt64 = 1
    /// Peripherals keep advertising while they have a link (BlueZ's example peripheral and btvirt
    /// do, and other radios can only measure a linked device while it does). False: a linked
    /// peripheral is silent to every adapter of every simulator sharing the link directory.
    public var advertiseWhileConnected: Bool = true

    /// Default settings.
    public init() {}
}

/// A local Bluetooth adapter (`adapters:` entry).
public struct AdapterSpec: Sendable {
    /// `hci0`: the last path component.
    public var name: String
    /// `Adapter1.Address`.
    public var address: String
    /// `Adapter1.Name` (the system name).
    public var systemName: String
    /// `Adapter1.Alias` at start.
    public var alias: String
    /// `Adapter1.Powered` at start.
    public var powered: Bool
    /// `Adapter1.Discoverable` at start.
    public var discoverable: Bool
    /// `Adapter1.Pairable` at start.
    public var pairable: Bool
    /// `Adapter1.Class`.
    public var deviceClass: UInt32

    /// Creates an adapter description.
    public init(name: String, address: String, systemName: String = "bluez-sim", alias: String? = nil,
                powered: Bool = true, discoverable: Bool = false, pairable: Bool = true, deviceClass: UInt32 = 0x000000) {
        self.name = name
        self.address = address
        self.systemName = systemName
        self.alias = alias ?? systemName
        self.powered = powered
        self.discoverable = discoverable
        self.pairable = pairable
        self.deviceClass = deviceClass
    }
}

/// A peripheral in radio range (`devices:` entry).
public struct PeripheralSpec: Sendable {
    /// `AA:BB:CC:DD:EE:FF` (uppercase).
    public var address: String
    /// `public` or `random`.
    public var addressType: String
    /// The advertised local name; nil when it advertises none.
    public var name: String?
    /// The adapter (`hci0`) that sees it. A peripheral heard by several adapters is one spec per
    /// adapter (same address, each with its RSSI): one device object under each adapter.
    public var adapter: String
    /// Mean RSSI in dBm at this adapter.
    public var rssi: Int16
    /// Per-device override of ``ScenarioSettings/advertiseWhileConnected``.
    public var advertiseWhileConnected: Bool?
    /// Advertised TX power, when any.
    public var txPower: Int16?
    /// GAP appearance, when any.
    public var appearance: UInt16?
    /// Service UUIDs in its advertisements (full 128-bit form).
    public var advertisedServices: [String]
    /// Manufacturer data by company id.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Service data by full 128-bit UUID.
    public var serviceData: [String: [UInt8]]
    /// The advertising flags AD field.
    public var advertisingFlags: [UInt8]
    /// True when BlueZ already has a device object for it at start (stored from an earlier session).
    public var known: Bool
    /// `Device1.Paired` / `Bonded` at start (implies `known`).
    public var paired: Bool
    /// `Device1.Trusted` at start.
    public var trusted: Bool
    /// False to keep it out of range at start (no advertisements, connections fail).
    public var inRange: Bool
    /// Per-device timing overrides (nil: the scenario setting).
    public var advertiseDelay: Duration?
    /// Per-device override of ``ScenarioSettings/connectDelay``.
    public var connectDelay: Duration?
    /// Per-device override of ``ScenarioSettings/resolveDelay``.
    public var resolveDelay: Duration?
    /// Per-device override of ``ScenarioSettings/resolveDelayCached``.
    public var resolveDelayCached: Duration?
    /// The GAP Device Name (0x2A00) read over GATT: `Name`/`Alias` become it once services resolve,
    /// until the next advertisement (BlueZ 5.66); nil: the advertised name.
    public var gapName: String?
    /// Per-device override of ``ScenarioSettings/disconnectDelay``.
    public var disconnectDelay: Duration?
    /// Per-device ATT MTU.
    public var mtu: UInt16?
    /// The GATT database (primary services in handle order).
    public var services: [ServiceSpec]
    /// Sensor readings broadcast in its advertisements (service data), when any.
    public var broadcast: BroadcastSpec?
    /// Captured advertisements it sends in turn, one per advertisement (scenario `replay`); empty: none.
    public var replay: [ReplayFrame] = []
    /// Its advertising period (scenario `advertising_interval`); nil: the scenario's `rssi_interval`
    /// (a `broadcast`'s own interval wins).
    public var advertisingInterval: Duration?
    /// What it does when a central pairs (scenario `pairing`, `passkey`; default Just Works).
    public var pairing: PeripheralPairing = .justWorks
    /// A phone or watch with privacy (scenario `irk`): it advertises from a resolvable private address of this key,
    /// a new one every ``rotateEvery``; ``address`` is then the address currently advertised and ``identity`` the
    /// scenario's `address` (its identity address, which the control interface names).
    public var irk: PrivacyKey?
    /// How often a device with an ``irk`` takes a new resolvable private address (scenario `rotate_every`, default
    /// 15 minutes, what phones do).
    public var rotateEvery: Duration = .seconds(900)
    /// The scenario's `address` when it differs from the advertised ``address`` (a device with an ``irk``).
    public var identity: String?
    /// Its request/answer protocol (scenario `exchanges`), if any.
    public var exchanges: DeviceExchanges?

    /// The address the control interface names it by: the identity address, else the address.
    public var controlAddress: String { identity ?? address }

    /// Creates a peripheral description.
    public init(address: String, addressType: String = "public", name: String? = nil, adapter: String = "hci0",
                rssi: Int16 = -60, txPower: Int16? = nil, appearance: UInt16? = nil, advertisedServices: [String] = [],
                manufacturerData: [UInt16: [UInt8]] = [:], serviceData: [String: [UInt8]] = [:],
                advertisingFlags: [UInt8] = [0x06], known: Bool = false, paired: Bool = false, trusted: Bool = false,
                inRange: Bool = true, services: [ServiceSpec] = []) {
        self.address = address
        self.addressType = addressType
        self.name = name
        self.adapter = adapter
        self.rssi = rssi
        self.txPower = txPower
        self.appearance = appearance
        self.advertisedServices = advertisedServices
        self.manufacturerData = manufacturerData
        self.serviceData = serviceData
        self.advertisingFlags = advertisingFlags
        self.known = known
        self.paired = paired
        self.trusted = trusted
        self.inRange = inRange
        self.services = services
    }
}

/// A GATT service of a peripheral.
public struct ServiceSpec: Sendable {
    /// Full 128-bit UUID.
    public var uuid: String
    /// `GattService1.Primary`.
    public var primary: Bool
    /// Its characteristics in handle order.
    public var characteristics: [CharacteristicSpec]

    /// Creates a service description.
    public init(uuid: String, primary: Bool = true, characteristics: [CharacteristicSpec] = []) {
        self.uuid = uuid
        self.primary = primary
        self.characteristics = characteristics
    }
}

/// A GATT characteristic of a peripheral.
public struct CharacteristicSpec: Sendable {
    /// Full 128-bit UUID.
    public var uuid: String
    /// BlueZ flag names: `read`, `write`, `write-without-response`, `notify`, `indicate`, `reliable-write`, ...
    public var flags: [String]
    /// The value at start (what a read returns before any write or generated value).
    public var value: [UInt8]
    /// Generator of notified (and read) values; nil: notifications repeat the current value.
    public var generator: ValueGeneratorSpec?
    /// Notification period while notifying; nil: no periodic notifications.
    public var interval: Duration?
    /// Full UUID of a characteristic of the same service that notifies every value written here.
    public var echoTo: String?
    /// `AcquireNotify` is accepted (for a `notify` characteristic); false: it is refused with
    /// `NotSupported`, as bluetoothd refuses a characteristic it cannot acquire (scenario
    /// `acquire_notify: false`).
    public var acquireNotify: Bool = true
    /// Injected errors and delays (`read_error`, `write_error`, `error_when`, `accepted_writes`,
    /// `notify_error`, `read_delay`, `write_delay`, `notify_delay`).
    public var faults: CharacteristicFaults
    /// Extra descriptors (a CCC 2902 is added automatically for notify/indicate).
    public var descriptors: [DescriptorSpec]

    /// Creates a characteristic description.
    public init(uuid: String, flags: [String], value: [UInt8] = [], generator: ValueGeneratorSpec? = nil,
                interval: Duration? = nil, echoTo: String? = nil, faults: CharacteristicFaults = CharacteristicFaults(),
                descriptors: [DescriptorSpec] = []) {
        self.uuid = uuid
        self.flags = flags
        self.value = value
        self.generator = generator
        self.interval = interval
        self.echoTo = echoTo
        self.faults = faults
        self.descriptors = descriptors
    }
}

/// A GATT descriptor of a characteristic.
public struct DescriptorSpec: Sendable {
    /// Full 128-bit UUID.
    public var uuid: String
    /// Its value.
    public var value: [UInt8]
    /// BlueZ flag names (default `read`).
    public var flags: [String]

    /// Creates a descriptor description.
    public init(uuid: String, value: [UInt8] = [], flags: [String] = ["read"]) {
        self.uuid = uuid
        self.value = value
        self.flags = flags
    }
}
