import BridgeCore

/// A characteristic of a connected peripheral, mapped to its topics (SPEC §4).
package struct MappedCharacteristic: Sendable, Hashable {
    /// The `service/characteristic` segments under the device.
    package struct Key: Hashable, Sendable {
        package var service: String
        package var characteristic: String

        /// A value with these fields.
        package init(service: String, characteristic: String) {
            self.service = service
            self.characteristic = characteristic
        }
    }

    package var path: String
    package var uuid: BluetoothUUID
    package var key: Key
    package var properties: CharacteristicProperties
    package var format: ValueFormat
    /// The configured `write_types`, which replace the Flags for writes.
    package var writeTypes: Set<GattWriteType>?
    /// The configured `poll` interval.
    package var poll: Duration?
    /// Its Presentation Format descriptor, read at setup when no `format` is configured: its
    /// values are decoded by it.
    package var presentation: PresentationFormat? = nil
    /// Its User Description, read at setup when no `name` is configured (Home Assistant's name).
    package var userDescription: String? = nil

    package var canNotify: Bool { properties.canNotify }
    package var canRead: Bool { properties.canRead }

    /// A value with these fields.
    package init(
        path: String, uuid: BluetoothUUID, key: Key, properties: CharacteristicProperties, format: ValueFormat, writeTypes: Set<GattWriteType>? = nil, poll: Duration? = nil, presentation: PresentationFormat? = nil, userDescription: String? = nil
    ) {
        self.path = path
        self.uuid = uuid
        self.key = key
        self.properties = properties
        self.format = format
        self.writeTypes = writeTypes
        self.poll = poll
        self.presentation = presentation
        self.userDescription = userDescription
    }
}
