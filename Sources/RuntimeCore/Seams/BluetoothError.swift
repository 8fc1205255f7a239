/// A failed BlueZ call as the cores see it: the class the decisions act on, and BlueZ's name and message
/// for the logs and the command results. The executors translate the BlueZ client's errors into it.
package struct BluetoothError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The classes of failure the cores tell apart (everything else is ``other``).
    package enum Code: String, Sendable, Hashable {
        /// A discovery (or another operation) of someone else is under way.
        case inProgress
        /// `Connect` of a device that is connected.
        case alreadyConnected
        /// `RegisterMonitor` or `Pair` of something that exists.
        case alreadyExists
        /// The device refused for lack of authorization (pairing).
        case notAuthorized
        /// Pairing failed.
        case authenticationFailed
        /// The bus's policy refuses this process.
        case accessDenied
        /// Anything else.
        case other
    }

    /// The class of the error.
    package var code: Code
    /// The D-Bus error name, e.g. `org.bluez.Error.Failed`.
    package var name: String
    /// BlueZ's message, e.g. `le-connection-abort-by-local`.
    package var message: String

    /// An error of class `code`, with BlueZ's name and message.
    package init(code: Code, name: String, message: String) {
        self.code = code
        self.name = name
        self.message = message
    }

    package var description: String { message.isEmpty ? name : "\(name): \(message)" }
}
