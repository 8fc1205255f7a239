import BridgeCore

/// A managed device as the registry shows it, without its mailbox.
struct DeviceRecord: Sendable, Equatable {
    var path: String
    var segment: String
    var address: BluetoothAddress
    var addressType: String
    var policy: ConnectionPolicy
    /// A link is up (from the session's reports).
    var connected = false
    /// The published availability.
    var available = false
    /// Resolved service segments while connected.
    var services: [String] = []
    /// Links that came up since start (health: `reconnects` is one less).
    var connects = 0
}
