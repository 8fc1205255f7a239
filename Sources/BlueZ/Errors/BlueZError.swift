import DBusKit

/// An error from BlueZ, or from talking to it, with a code the bridge can act on.
public struct BlueZError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong, in classes that need different handling.
    public enum Code: String, Sendable, Hashable {
        case inProgress, failed, notReady, notPermitted, notSupported, notAuthorized, notConnected
        case alreadyConnected, alreadyExists, doesNotExist, invalidArguments, invalidValueLength
        case authenticationFailed, timeout, noAdapter, serviceUnavailable, disconnected, cancelled
        /// The bus's policy refuses this process (`org.freedesktop.DBus.Error.AccessDenied`).
        case accessDenied
        case other
    }

    /// The class of the error.
    public var code: Code
    /// The D-Bus error name, e.g. `org.bluez.Error.Failed`.
    public var name: String
    /// BlueZ's message, e.g. `le-connection-abort-by-local`.
    public var message: String

    /// Creates an error.
    public init(code: Code, name: String, message: String) {
        self.code = code
        self.name = name
        self.message = message
    }

    /// Classifies a D-Bus error by its name.
    public init(_ error: DBusError) {
        let code: Code
        switch error.name {
        case "org.bluez.Error.InProgress": code = .inProgress
        case "org.bluez.Error.Failed", "org.bluez.Failed": code = .failed
        case "org.bluez.Error.NotReady": code = .notReady
        case "org.bluez.Error.NotPermitted": code = .notPermitted
        case "org.bluez.Error.NotSupported": code = .notSupported
        case "org.bluez.Error.NotAuthorized": code = .notAuthorized
        case "org.bluez.Error.NotConnected": code = .notConnected
        case "org.bluez.Error.AlreadyConnected": code = .alreadyConnected
        case "org.bluez.Error.AlreadyExists": code = .alreadyExists
        case "org.bluez.Error.DoesNotExist": code = .doesNotExist
        case "org.bluez.Error.InvalidArguments": code = .invalidArguments
        case "org.bluez.Error.InvalidValueLength": code = .invalidValueLength
        case "org.bluez.Error.AuthenticationFailed": code = .authenticationFailed
        case DBusError.Name.noReply, DBusError.Name.timeout: code = .timeout
        case DBusError.Name.serviceUnknown, DBusError.Name.nameHasNoOwner: code = .serviceUnavailable
        case DBusError.Name.unknownObject, DBusError.Name.unknownMethod: code = .doesNotExist
        case DBusError.Name.disconnected: code = .disconnected
        case DBusError.Name.cancelled: code = .cancelled
        case DBusError.Name.accessDenied: code = .accessDenied
        default: code = .other
        }
        self.init(code: code, name: error.name, message: error.message)
    }

    public var description: String { message.isEmpty ? name : "\(name): \(message)" }
}
