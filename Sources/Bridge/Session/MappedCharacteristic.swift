import BridgeCore

/// A characteristic of a connected peripheral, mapped to its topics (SPEC §4).
struct MappedCharacteristic: Sendable, Hashable {
    /// The `service/characteristic` segments under the device.
    struct Key: Hashable, Sendable {
        var service: String
        var characteristic: String
    }

    var path: String
    var uuid: BluetoothUUID
    var key: Key
    var properties: CharacteristicProperties
    var format: ValueFormat
    /// The configured `write_types`, which replace the Flags for writes.
    var writeTypes: Set<GattWriteType>?
    /// The configured `poll` interval.
    var poll: Duration?
    /// Its Presentation Format descriptor, read at setup when no `format` is configured: its
    /// values are decoded by it.
    var presentation: PresentationFormat? = nil
    /// Its User Description, read at setup when no `name` is configured (Home Assistant's name).
    var userDescription: String? = nil

    var canNotify: Bool { properties.canNotify }
    var canRead: Bool { properties.canRead }
}
