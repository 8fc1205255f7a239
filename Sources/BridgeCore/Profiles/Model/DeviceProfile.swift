/// A device profile (SPEC §15): a maker's GATT protocol as data. What the bridge does on every
/// connection (``steps``), how answers become values (``decodes``), and the named commands a user
/// publishes to `{base}/{device}/command/{name}/set`.
///
/// Built by the config loader from a shipped profile or a file in `profiles_dir`; a device entry
/// binds one to a device with its options (``DeviceProfileBinding``).
public struct DeviceProfile: Sendable, Hashable {
    /// Whether the bridge keeps the link.
    public enum Connection: String, Sendable, Hashable, CaseIterable {
        /// Connect every ``DeviceProfile/interval``, run the steps, disconnect.
        case poll
        /// Keep the link; the steps run on every connection.
        case always
    }

    /// Where a profile came from (log lines and `bridge/devices` say it).
    public enum Source: Sendable, Hashable, CustomStringConvertible {
        /// Compiled into the bridge.
        case shipped
        /// A file of `profiles_dir`.
        case file(String)

        public var description: String {
            switch self {
            case .shipped: "shipped"
            case .file(let path): path
            }
        }
    }

    /// An option a device entry may give in `profile_options` (`password`).
    public struct Option: Sendable, Hashable {
        /// The kind of value.
        public enum Kind: String, Sendable, Hashable, CaseIterable {
            /// Any text.
            case string
            /// A decimal integer.
            case integer
        }

        /// The kind of value.
        public var kind: Kind
        /// Whether an entry may leave it out.
        public var optional: Bool

        /// Creates an option.
        public init(kind: Kind = .string, optional: Bool = false) {
            self.kind = kind
            self.optional = optional
        }
    }

    /// The profile's id (`xiaomi_miflora`), what `profile:` names.
    public var id: String
    /// The maker, for Home Assistant's device block.
    public var manufacturer: String?
    /// The model, for Home Assistant's device block.
    public var model: String?
    /// How `scan` and the page recognize a device of this kind.
    public var recognize: ProfileRecognize
    /// Whether the bridge keeps the link.
    public var connection: Connection
    /// The poll period (required for ``Connection/poll``); a device entry's `poll_interval` overrides it.
    public var interval: Duration?
    /// The declared options, by name.
    public var options: [String: Option]
    /// What runs on every connection, in order.
    public var steps: [ProfileStep]
    /// The named decodes steps refer to.
    public var decodes: [String: ProfileDecode]
    /// The named commands, in the file's order.
    public var commands: [ProfileCommand]
    /// Value names the profile declares beyond SPEC §7/§13's (with their unit and class).
    public var values: [String: ProfileValueInfo]
    /// Which commands make a cover (Home Assistant).
    public var cover: ProfileCover?
    /// Which commands and values make a thermostat (Home Assistant).
    public var climate: ProfileClimate?
    /// Where the profile came from.
    public var source: Source

    /// Creates a profile.
    public init(
        id: String, manufacturer: String? = nil, model: String? = nil, recognize: ProfileRecognize = .init(),
        connection: Connection = .always, interval: Duration? = nil, options: [String: Option] = [:],
        steps: [ProfileStep] = [], decodes: [String: ProfileDecode] = [:], commands: [ProfileCommand] = [],
        values: [String: ProfileValueInfo] = [:], cover: ProfileCover? = nil, climate: ProfileClimate? = nil,
        source: Source = .shipped
    ) {
        self.id = id
        self.manufacturer = manufacturer
        self.model = model
        self.recognize = recognize
        self.connection = connection
        self.interval = interval
        self.options = options
        self.steps = steps
        self.decodes = decodes
        self.commands = commands
        self.values = values
        self.cover = cover
        self.climate = climate
        self.source = source
    }

    /// The command named `name`.
    public func command(_ name: String) -> ProfileCommand? {
        commands.first { $0.name == name }
    }
}

/// How `scan` and the page recognize a device a profile fits: any given criterion that matches.
public struct ProfileRecognize: Sendable, Hashable {
    /// The advertised local name.
    public var name: NamePattern?
    /// Service data UUIDs the device advertises.
    public var serviceData: [BluetoothUUID]
    /// Service UUIDs the device advertises.
    public var services: [BluetoothUUID]

    /// Creates a recognizer.
    public init(name: NamePattern? = nil, serviceData: [BluetoothUUID] = [], services: [BluetoothUUID] = []) {
        self.name = name
        self.serviceData = serviceData
        self.services = services
    }

    /// Whether nothing is given (such a profile is never suggested).
    public var isEmpty: Bool { name == nil && serviceData.isEmpty && services.isEmpty }

    /// Whether an advertisement fits: its name matches, or it carries one of the service data or
    /// service UUIDs.
    public func matches(name: String?, serviceData: [BluetoothUUID], services: [BluetoothUUID]) -> Bool {
        if let pattern = self.name, let name, pattern.matches(name) { return true }
        if self.serviceData.contains(where: serviceData.contains) { return true }
        return self.services.contains(where: services.contains)
    }
}

/// A value name a profile declares (`values: { radon_1day: { unit: "Bq/m³" } }`).
public struct ProfileValueInfo: Sendable, Hashable {
    /// The unit, for Home Assistant.
    public var unit: String?
    /// The Home Assistant device class.
    public var deviceClass: String?

    /// Creates a declaration.
    public init(unit: String? = nil, deviceClass: String? = nil) {
        self.unit = unit
        self.deviceClass = deviceClass
    }
}
