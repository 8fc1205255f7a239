import BridgeCore

/// A managed device as the registry shows it, without its mailbox.
package struct DeviceRecord: Sendable, Equatable {
    package var path: String
    package var segment: String
    package var address: BluetoothAddress
    package var addressType: String
    package var policy: ConnectionPolicy
    /// A link is up (from the session's reports).
    package var connected = false
    /// The published availability.
    package var available = false
    /// Resolved service segments while connected.
    package var services: [String] = []
    /// Links that came up since start (health: `reconnects` is one less).
    package var connects = 0
    /// The maker and model as the device told them (Device Information, an advertisement family, a profile).
    package var manufacturer: String?
    package var model: String?
    /// The profile the device runs (SPEC §15), by id.
    package var profile: String?

    /// A value with these fields.
    package init(
        path: String, segment: String, address: BluetoothAddress, addressType: String, policy: ConnectionPolicy, connected: Bool = false, available: Bool = false, services: [String] = [], connects: Int = 0
    ) {
        self.path = path
        self.segment = segment
        self.address = address
        self.addressType = addressType
        self.policy = policy
        self.connected = connected
        self.available = available
        self.services = services
        self.connects = connects
    }
}
