import BlueZ
import BridgeCore
import MQTT

/// What a peripheral session reacts to, in arrival order.
enum SessionInput: Sendable {
    /// `Device1.Connected` changed.
    case connectedChanged(Bool)
    /// `Device1.ServicesResolved` changed.
    case servicesResolved(Bool)
    /// A GATT service or characteristic object of the device appeared or vanished.
    case gattObjectsChanged
    /// BlueZ removed the device object: the session ends.
    case deviceRemoved
    /// Connect now (a stored peripheral at start).
    case connectRequested
    /// `bridge/request/reconnect`: drop the link; the policy reconnects.
    case reconnectRequested
    /// A `/set` or `/get` command.
    case command(PendingCommand)
    /// An advertisement brought the device online, or decoded values with new names (from
    /// ``AdvertisementRouter``; advertisement sessions only).
    case advertised
    /// The `AcquireNotify` socket of a characteristic hung up.
    case notificationsReleased(characteristic: String)
    /// A connection slot was granted.
    case slotGranted
    /// `Connect` returned, for connection attempt `attempt`.
    case connectFinished(attempt: Int, error: BlueZError?)
    /// A GATT operation of the queue finished.
    case operationFinished(attempt: Int, GattOutcome)
    /// `Pair` (and `Trusted`) returned, for connection attempt `attempt`.
    case pairFinished(attempt: Int, error: BlueZError?)
    /// End the session: `forget` removes nothing from BlueZ here (the supervisor does); both
    /// disconnect and end the loop.
    case stop
}

/// What a session tells the supervisor.
enum SessionReport: Sendable {
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
struct MappedDevice: Sendable {
    /// `service/characteristic` segments → characteristic UUID (the state file's map).
    var characteristics: [String: String]
    /// Resolved service UUIDs.
    var services: [String]
    /// Resolved service topic segments (the registry's `services`).
    var serviceSegments: [String]
    /// Home Assistant discovery entries.
    var discovery: [HomeAssistantDiscovery.Characteristic]
    /// The device's name from BlueZ.
    var name: String?
    /// What its Device Information service said.
    var information: DeviceInformation
}

/// A `/set` or `/get` waiting in a session's queue.
struct PendingCommand: Sendable {
    var message: MQTTMessage
    var device: String
    var service: String
    var characteristic: String
    var operation: CharacteristicOperation
    var resultTopic: String
    /// `commands.timeout` after arrival (SPEC §4): answered by then, never sent afterwards.
    var deadline: BridgeInstant
}
