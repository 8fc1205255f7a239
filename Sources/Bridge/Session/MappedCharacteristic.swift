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

    var canNotify: Bool { properties.canNotify }
    var canRead: Bool { properties.canRead }
}
