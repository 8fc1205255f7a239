/// What ``SightingsBook`` is told: what this bridge's radios hear, its links and slots, and the publishing triggers.
///
/// Radio facts name the device by its Bluetooth address (what BlueZ reports); addresses that no wanted device has
/// are ignored.
public enum SightingsInput: Sendable, Hashable {
    /// The broker connection came up (also after a reconnect): publish at once, so that the other bridges know what
    /// this one hears within their first 5 s (rule 2's quiet time), then every 5 s.
    case brokerConnected
    /// The broker connection is lost: nothing is published until ``brokerConnected``; readings are kept.
    case brokerDisconnected
    /// The adapters present and powered, with their free connection slots (`max_connections` minus links connected,
    /// connecting or promised to a claim). Replaces the previous set: an adapter missing here is gone, and what it
    /// heard no longer counts.
    case adapters(freeSlots: [String: Int])
    /// An advertisement or RSSI update: `adapter` heard `address` at `rssi` dBm. 127 (BlueZ's "invalid", what
    /// btvirt reports) and anything outside ``SightingsPayload/rssiRange`` are ignored.
    case heard(address: BluetoothAddress, adapter: String, rssi: Int)
    /// A link of this bridge to `address` is up (connected or connecting) through `adapter`.
    case linkUp(address: BluetoothAddress, adapter: String)
    /// This bridge's link to `address` is down.
    case linkDown(address: BluetoothAddress)
    /// An owner must be chosen (``ClusterAction/publishSightings``): publish now, rate-limited, if the payload changed.
    case publishRequested
    /// Time passed (at or after ``SightingsBook/nextDeadline(after:)``).
    case tick
}
