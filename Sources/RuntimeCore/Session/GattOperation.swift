import BridgeCore

/// One operation of a session's GATT queue: everything a session asks of one peripheral passes
/// through the queue, one at a time, in order.
package enum GattOperation<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Notifications after connecting: `AcquireNotify` (values over a socket, without
    /// dbus-daemon) where the characteristic notifies, else or when refused `StartNotify`.
    case subscribe(MappedCharacteristic)
    /// A read after connecting (`initial`) or by a `poll` interval.
    case read(MappedCharacteristic, initial: Bool)
    /// A descriptor of a characteristic, read before its subscription and reads (SPEC §11).
    case readDescriptor(MappedCharacteristic, DescriptorKind, path: String)
    /// The setup of a connection is done (a marker: no BlueZ call).
    case setupDone(onlyNew: Bool)
    /// A `/set` or `/get`.
    case command(PendingCommand<Instant>)
    /// `Device1.Pair` before the setup (the last connection ended with a refusal for lack of pairing).
    case pair
    /// A device profile's connection steps (SPEC §15), in the setup after the subscriptions and reads: a
    /// ``ProfileRun`` of several calls.
    case profileSteps
}

/// How a GATT operation ended.
package enum GattOutcome<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// `acquired`: through `AcquireNotify`'s socket (else `StartNotify`).
    case subscribed(MappedCharacteristic, error: BluetoothError?, acquired: Bool)
    /// `linkDropped`: the device's services were no longer resolved when the error came.
    case read(MappedCharacteristic, initial: Bool, Result<[UInt8], BluetoothError>, linkDropped: Bool)
    /// A descriptor's value, or why it could not be read.
    case descriptor(MappedCharacteristic, DescriptorKind, Result<[UInt8], BluetoothError>)
    /// A command was answered (`result`); a read's value is published on the value topic too. `refusal`: BlueZ
    /// refused it for lack of pairing (encryption, authentication), with this error.
    case command(PendingCommand<Instant>, CommandResult, readValue: ReadValue?, refusal: BluetoothError? = nil)
    /// A profile step's `WriteValue` (`[]`) or `ReadValue` (the value), or its error as a command error (SPEC §4
    /// codes). `linkDropped`: the device's services were no longer resolved when the error came.
    case profileCall(Result<[UInt8], CommandError>, linkDropped: Bool)
}

/// A value a `/get` read: published on the value topic too.
package struct ReadValue: Sendable {
    package var path: String
    package var value: [UInt8]

    /// A value with these fields.
    package init(path: String, value: [UInt8]) {
        self.path = path
        self.value = value
    }
}
