import BlueZ
import BridgeCore

/// One operation of a session's GATT queue: everything a session asks of one peripheral passes
/// through the queue, one at a time, in order.
enum GattOperation: Sendable {
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
    case command(PendingCommand)
    /// `Device1.Pair` before the setup (the last connection ended with a refusal for lack of pairing).
    case pair
}

/// How a GATT operation ended.
enum GattOutcome: Sendable {
    /// `acquired`: through `AcquireNotify`'s socket (else `StartNotify`).
    case subscribed(MappedCharacteristic, error: BlueZError?, acquired: Bool)
    /// `linkDropped`: the device's services were no longer resolved when the error came.
    case read(MappedCharacteristic, initial: Bool, Result<[UInt8], BlueZError>, linkDropped: Bool)
    /// A descriptor's value, or why it could not be read.
    case descriptor(MappedCharacteristic, DescriptorKind, Result<[UInt8], BlueZError>)
    /// A command was answered (`result`); a read's value is published on the value topic too. `refusal`: BlueZ
    /// refused it for lack of pairing (encryption, authentication), with this error.
    case command(PendingCommand, CommandResult, readValue: ReadValue?, refusal: BlueZError? = nil)
}

/// A value a `/get` read: published on the value topic too.
struct ReadValue: Sendable {
    var path: String
    var value: [UInt8]
}
