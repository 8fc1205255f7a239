extension BridgeConfig {
    /// One entry of `devices`.
    public struct Device: Sendable, Hashable {
        /// Which peripherals the entry applies to.
        public enum Match: Sendable, Hashable, CustomStringConvertible {
            /// `match: { address: "C8:12:34:56:78:9A" }`
            case address(BluetoothAddress)
            /// `match: { name: "Polar H10*" }` (glob with `*` and `?`).
            case name(NamePattern)

            /// `address C8:...` or `name "Polar H10*"`.
            public var description: String {
                switch self {
                case .address(let address): return "address \(address)"
                case .name(let pattern): return "name \"\(pattern)\""
                }
            }

            /// Whether a peripheral with this address and advertised name matches.
            public func matches(address: BluetoothAddress, name: String?) -> Bool {
                switch self {
                case .address(let wanted): return wanted == address
                case .name(let pattern): return name.map(pattern.matches) ?? false
                }
            }
        }

        /// `match`.
        public var match: Match
        /// `name`: the device's topic segment instead of its address.
        public var name: String?
        /// `characteristics`: per-characteristic settings.
        public var characteristics: [Characteristic]
        /// `services`: per-service settings.
        public var services: [Service]
        /// `connection` with `poll_interval`, `listen` and `advertisement` (SPEC §6, §7).
        public var connection: ConnectionPolicy = .always
        /// `only_services`: map only these services (and the characteristics named in
        /// ``characteristics``); `nil` maps all but GAP and GATT (see ``GattMapping``).
        public var onlyServices: [BluetoothUUID]?
        /// `pairing` (SPEC §11): how the device pairs when an operation needs it; default ``Pairing/none``.
        public var pairing: Pairing = .none
        /// `passkey` (with ``Pairing/passkey``): the six digits the device displays or was set to.
        public var passkey: UInt32?
        /// The device's profile (SPEC §15) bound with its `profile_options`: its steps replace §3's
        /// "subscribe every notifying, read every readable characteristic".
        public var profile: DeviceProfileBinding?

        /// `devices[].pairing`.
        public enum Pairing: String, Sendable, Hashable, CaseIterable {
            /// Pair only when a read or write needs it, Just Works (the default).
            case none
            /// Just Works.
            case justWorks = "just_works"
            /// Passkey entry: the bridge types ``Device/passkey``.
            case passkey
        }

        /// Creates an entry.
        public init(match: Match, name: String? = nil, characteristics: [Characteristic] = [], services: [Service] = []) {
            self.match = match
            self.name = name
            self.characteristics = characteristics
            self.services = services
        }

        /// The settings of a characteristic UUID, if any.
        public func characteristic(_ uuid: BluetoothUUID) -> Characteristic? {
            characteristics.first { $0.uuid == uuid }
        }

        /// The settings of a service UUID, if any.
        public func service(_ uuid: BluetoothUUID) -> Service? {
            services.first { $0.uuid == uuid }
        }
    }

    /// One entry of `devices[].characteristics`.
    public struct Characteristic: Sendable, Hashable {
        /// `uuid`.
        public var uuid: BluetoothUUID
        /// `name`: the topic segment instead of the UUID.
        public var name: String?
        /// `format`; `nil` when not set (see ``effectiveFormat``).
        public var format: ValueFormat?
        /// `poll`: read periodically at this interval.
        public var poll: Duration?
        /// `write_types`: the write types the peripheral accepts (`[request, command]`), overriding
        /// what its BlueZ `Flags` say; `nil` when not set (the Flags decide).
        ///
        /// For devices whose Flags are wrong: many accept Write Commands without announcing
        /// `write-without-response` (BlueZ sends a `type: command` write whatever the Flags say).
        public var writeTypes: Set<GattWriteType>?
        /// `press`: Home Assistant shows the characteristic as a button that writes these bytes.
        public var press: [UInt8]?
        /// `min` / `max`: the range of its Home Assistant `number` entity.
        public var range: ClosedRange<Double>?

        /// The configured format, else the SIG default for the UUID.
        public var effectiveFormat: ValueFormat { format ?? .default(for: uuid) }

        /// Creates an entry.
        public init(
            uuid: BluetoothUUID, name: String? = nil, format: ValueFormat? = nil, poll: Duration? = nil,
            writeTypes: Set<GattWriteType>? = nil
        ) {
            self.uuid = uuid
            self.name = name
            self.format = format
            self.poll = poll
            self.writeTypes = writeTypes
        }
    }

    /// One entry of `devices[].services`.
    public struct Service: Sendable, Hashable {
        /// `uuid`.
        public var uuid: BluetoothUUID
        /// `name`: the topic segment instead of the UUID.
        public var name: String?

        /// Creates an entry.
        public init(uuid: BluetoothUUID, name: String? = nil) {
            self.uuid = uuid
            self.name = name
        }
    }
}
