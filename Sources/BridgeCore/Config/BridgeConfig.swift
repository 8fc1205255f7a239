import Logging

/// The bridge configuration (`bridge.yaml`, SPEC §3), with every default applied.
///
/// Load it with ``load(path:environment:hostName:)`` or
/// ``parse(yaml:fileName:environment:hostName:)``; every error is a
/// ``ConfigError`` located at the offending node.
public struct BridgeConfig: Sendable, Hashable {
    /// `mqtt`: the broker connection.
    public var mqtt: MQTT
    /// `bluetooth`: the adapter and the scan filter.
    public var bluetooth: Bluetooth
    /// `state_file`: where known peripherals are kept (SPEC §5); `nil` keeps nothing.
    public var stateFile: String?
    /// `homeassistant`: MQTT discovery for Home Assistant.
    public var homeAssistant: HomeAssistant
    /// `commands`: `/set`, `/get` and bridge request handling.
    public var commands: Commands
    /// `reconnect`: the reconnect backoff (BLE devices and broker).
    public var reconnect: Reconnect
    /// `health`: the periodic health report (SPEC §9).
    public var health = Health()
    /// `log_level`: `trace`, `debug`, `info`, `notice`, `warning`, `error`, `critical`; `nil` when not set.
    public var logLevel: Logger.Level?
    /// `devices`: per-device settings, in file order.
    public var devices: [Device]
    /// `trackers`: phones, watches, tags and beacons whose presence is published (SPEC §12), in file order.
    public var trackers: [Tracker] = []
    /// Every profile the bridge knows (SPEC §15): the shipped ones and `profiles_dir`'s, by id.
    /// `scan` and the page recognize devices with them.
    public var profiles: [String: DeviceProfile] = [:]
    /// `profiles_dir`: the directory of the user's profiles.
    public var profilesDir = BridgeConfig.defaultProfilesDir
    /// Where the user's profiles are when `profiles_dir` is not given.
    public static let defaultProfilesDir = "/etc/ble-mqtt-bridge/profiles"
    /// `bridge.id`: this bridge's id in a cluster (SPEC §10), `[a-z0-9_-]+`; default the host name made valid
    /// (``BridgeID/derived(fromHostName:)``).
    public var bridgeID = BridgeID.derived(fromHostName: BridgeConfig.currentHostName())
    /// `cluster`: several bridges on one broker sharing the devices (SPEC §10).
    public var cluster = Cluster()
    /// `management` (default `true`): `false` refuses every `device/*` request (SPEC §14); the devices added at run
    /// time are still served.
    public var management = true
    /// `devices_file`: the local copy of the devices added at run time (SPEC §14); nil: ``devicesFilePath``'s default.
    public var devicesFile: String?
    /// `web`: the bridge's page (SPEC §14).
    public var web = Web()
    /// Non-fatal findings of the loader (e.g. `mqtt.tls` with an `mqtt://` URL),
    /// printed like errors: `file:line:column: message`.
    public var warnings: [ConfigError] = []
    /// Settings that are valid but that this version cannot act on yet (`cluster.enabled: true`), located like
    /// errors; ``checkSupported()`` throws them. Parsing keeps them apart so that the settings can be tested and
    /// used by code that implements them before the runtime does.
    public var unsupported: [ConfigError] = []

    /// Creates a configuration; everything but the broker has a default.
    public init(
        mqtt: MQTT,
        bluetooth: Bluetooth = Bluetooth(),
        stateFile: String? = nil,
        homeAssistant: HomeAssistant = HomeAssistant(),
        commands: Commands = Commands(),
        reconnect: Reconnect = Reconnect(),
        logLevel: Logger.Level? = nil,
        devices: [Device] = []
    ) {
        self.mqtt = mqtt
        self.bluetooth = bluetooth
        self.stateFile = stateFile
        self.homeAssistant = homeAssistant
        self.commands = commands
        self.reconnect = reconnect
        self.logLevel = logLevel
        self.devices = devices
    }

    /// The first `devices` entry that applies to a peripheral: an entry matching
    /// its address wins over one matching its name.
    public func device(address: BluetoothAddress, name: String?) -> Device? {
        if let byAddress = devices.first(where: { $0.match == .address(address) }) { return byAddress }
        guard let name else { return nil }
        return devices.first { device in
            if case .name(let pattern) = device.match { return pattern.matches(name) }
            return false
        }
    }
}
