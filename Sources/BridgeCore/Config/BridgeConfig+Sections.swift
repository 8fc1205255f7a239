extension BridgeConfig {
    /// The `bluetooth` section.
    public struct Bluetooth: Sendable, Hashable {
        /// `adapter`: the adapter name, default `"hci0"` (a path such as `/org/bluez/hci1` is accepted and reduced to its name).
        public var adapter: String
        /// `services`: the scan filter; every advertiser of one of these is connected.
        public var services: [BluetoothUUID]
        /// `scan_watchdog`, default 60 s: restart discovery when no advertisement has been seen for
        /// this long while scanning (adapters that stop reporting recover); `nil` (`off` or `0s`)
        /// means no watchdog.
        public var scanWatchdog: Duration?
        /// `adapters` as written (SPEC §10); `nil` when absent, which means `[adapter]` (``adapterSelection``).
        /// With a list, ``adapter`` is its first name.
        public var adapters: AdapterSelection?
        /// `max_connections`: never more links (connected or connecting) at once, per adapter (SPEC §6, §10);
        /// default 7.
        public var maxConnections: Int = 7
        /// `acquire_notify`: take notifications through `AcquireNotify` sockets where BlueZ offers
        /// them (values skip dbus-daemon), else `StartNotify`; default true.
        public var acquireNotify = true
        /// `agent`: register an `org.bluez.Agent1` that answers pairing requests for the configured devices
        /// (SPEC §11); default true.
        public var agent = true
        /// `advertisements`: also publish every advertiser a decoder understands (SPEC §7).
        public var advertisements: AdvertisementMode = .off

        /// `bluetooth.advertisements`.
        public enum AdvertisementMode: String, Sendable, Hashable {
            /// Only devices with `connection: advertisement`.
            case off
            /// Also every advertiser a decoder understands.
            case decodable
        }

        /// `bluetooth.adapters`: the adapters the bridge uses.
        public enum AdapterSelection: Sendable, Hashable {
            /// These adapters, in this order.
            case named([String])
            /// Every adapter BlueZ has, as they come and go.
            case all
        }

        /// The adapters in use: `adapters`, else `[adapter]`.
        public var adapterSelection: AdapterSelection { adapters ?? .named([adapter]) }

        /// The adapter's BlueZ object path, e.g. `/org/bluez/hci0`.
        public var adapterPath: String { "/org/bluez/\(adapter)" }

        /// Creates the section.
        public init(adapter: String = "hci0", services: [BluetoothUUID] = [], scanWatchdog: Duration? = .seconds(60)) {
            self.adapter = adapter
            self.services = services
            self.scanWatchdog = scanWatchdog
        }
    }

    /// The `homeassistant` section.
    public struct HomeAssistant: Sendable, Hashable {
        /// `discovery`, default `false`.
        public var discovery: Bool
        /// `prefix`, default `"homeassistant"`.
        public var prefix: String
        /// `support_url`: the discovery messages' `origin.support_url` (where users of this bridge
        /// get help); default none, and then the messages have no `support_url`.
        public var supportURL: String?

        /// Creates the section.
        public init(discovery: Bool = false, prefix: String = "homeassistant", supportURL: String? = nil) {
            self.discovery = discovery
            self.prefix = prefix
            self.supportURL = supportURL
        }
    }

    /// The `commands` section.
    public struct Commands: Sendable, Hashable {
        /// `timeout`, default 10 s: how long a command waits for its device and for BlueZ.
        public var timeout: Duration
        /// `queue`, default 1024: commands waiting per device; more are answered `busy`.
        public var queue: Int
        /// `allow`, default `["*/*/*"]`: the characteristics `/set` and `/get` may reach (SPEC §8);
        /// empty makes the bridge read-only from MQTT.
        public var allow: [CommandPattern]

        /// Creates the section.
        public init(timeout: Duration = .seconds(10), queue: Int = 1024, allow: [CommandPattern] = [.everything]) {
            self.timeout = timeout
            self.queue = queue
            self.allow = allow
        }

        /// Whether a command for these topic segments may run.
        public func allows(device: String, service: String, characteristic: String) -> Bool {
            allow.contains { $0.matches(device: device, service: service, characteristic: characteristic) }
        }
    }

    /// The `health` section (SPEC §9).
    public struct Health: Sendable, Hashable {
        /// `interval`, default 60 s: how often `{base}/bridge/health` is published; nil (`0s`) turns it off.
        public var interval: Duration?
        /// `metrics_file`: where the same figures are written in the Prometheus text format, every
        /// `interval` (for node_exporter's textfile collector: a `.prom` file in its directory).
        public var metricsFile: String?

        /// Creates the section.
        public init(interval: Duration? = .seconds(60), metricsFile: String? = nil) {
            self.interval = interval
            self.metricsFile = metricsFile
        }
    }

    /// The `reconnect` section.
    public struct Reconnect: Sendable, Hashable {
        /// `initial_delay`, default 1 s.
        public var initialDelay: Duration
        /// `max_delay`, default 60 s.
        public var maxDelay: Duration

        /// Creates the section.
        public init(initialDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(60)) {
            self.initialDelay = initialDelay
            self.maxDelay = maxDelay
        }
    }
}
