import BridgeCore

/// A device a session is created for.
package struct SessionDevice<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    package var path: String
    package var address: BluetoothAddress
    package var addressType: String
    package var segment: String
    package var config: BridgeConfig.Device?
    /// Characteristic UUIDs whose reads need pairing (from the state file): never read.
    package var unreadable: Set<String>
    /// Connect at once (a stored peripheral).
    package var connectNow: Bool
    /// Jitter seed of the backoff.
    package var seed: UInt64
    /// The connection policy: the `devices` entry's, `advertisement` for an advertiser that
    /// `bluetooth.advertisements: decodable` picked up, else `always`.
    package var policy: ConnectionPolicy
    /// When the device may pair again after a failed pairing of an earlier session (SPEC §11).
    package var pairingRetry: PairingRetry<Instant> = PairingRetry<Instant>()

    /// The device profile bound to the entry (SPEC §15), if it has one.
    package var profile: DeviceProfileBinding? { config?.profile }

    /// A value with these fields.
    package init(
        path: String, address: BluetoothAddress, addressType: String, segment: String, config: BridgeConfig.Device? = nil, unreadable: Set<String>, connectNow: Bool, seed: UInt64, policy: ConnectionPolicy, pairingRetry: PairingRetry<Instant> = PairingRetry<Instant>()
    ) {
        self.path = path
        self.address = address
        self.addressType = addressType
        self.segment = segment
        self.config = config
        self.unreadable = unreadable
        self.connectNow = connectNow
        self.seed = seed
        self.policy = policy
        self.pairingRetry = pairingRetry
    }
}
