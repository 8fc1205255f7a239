import BridgeCore

/// What a session tells the supervisor.
package enum SessionReport: Sendable {
    /// The published availability changed.
    case availability(Bool)
    /// The characteristics were mapped: remember the peripheral, publish discovery configs.
    case mapped(MappedDevice)
    /// A read was refused for lack of pairing: remember the characteristic UUID.
    case unreadable(uuid: String)
    /// The device paired (a bond now exists).
    case paired
    /// The link came up or went down (the device list changed). The supervisor, the registry's
    /// only writer, records it.
    case linkChanged(connected: Bool)
    /// A `Connect` call returned, successful or not (stored peripherals hold the scan until then).
    case connectReturned
    /// An advertisement device's decoded value names grew, or its maker or model became known
    /// (Home Assistant discovery): the decoder, a sample of each value, the maker and model.
    case advertised(HomeAssistantDiscovery.Advertised)
}

/// A session's mapping of one connection, for the supervisor.
package struct MappedDevice: Sendable {
    /// `service/characteristic` segments → characteristic UUID (the state file's map).
    package var characteristics: [String: String]
    /// Resolved service UUIDs.
    package var services: [String]
    /// Resolved service topic segments (the registry's `services`).
    package var serviceSegments: [String]
    /// Home Assistant discovery entries.
    package var discovery: [HomeAssistantDiscovery.Characteristic]
    /// The device's name from BlueZ.
    package var name: String?
    /// What its Device Information service said.
    package var information: DeviceInformation
    /// The id of the device's profile (SPEC §15), if it has one.
    package var profile: String? = nil

    /// A value with these fields.
    package init(
        characteristics: [String: String], services: [String], serviceSegments: [String], discovery: [HomeAssistantDiscovery.Characteristic], name: String? = nil, information: DeviceInformation, profile: String? = nil
    ) {
        self.profile = profile
        self.characteristics = characteristics
        self.services = services
        self.serviceSegments = serviceSegments
        self.discovery = discovery
        self.name = name
        self.information = information
    }
}
