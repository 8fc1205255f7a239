import BridgeBase
import DBusKit

/// The D-Bus errors bluetoothd replies with (names and messages as in BlueZ 5.66 `src/error.c`
/// and `src/gatt-client.c`).
public enum BluezError {
    /// `org.bluez.Error.`, the prefix of every BlueZ error name.
    public static let prefix = "org.bluez.Error."

    /// The message bluetoothd 5.66 (`src/error.c`) sends with a BlueZ error `name` (full or short)
    /// when the error has a fixed message; nil otherwise.
    public static func standardMessage(for name: String) -> String? {
        let short = name.hasPrefix(prefix) ? String(name.dropFirst(prefix.count)) : name
        switch short {
        case "InvalidArguments": return "Invalid arguments in method call"
        case "InProgress": return "In Progress"
        case "AlreadyExists": return "Already Exists"
        case "NotSupported": return "Operation is not supported"
        case "NotConnected": return "Not Connected"
        case "AlreadyConnected": return "Already Connected"
        case "NotAvailable": return "Operation currently not available"
        case "DoesNotExist": return "Does Not Exist"
        case "NotAuthorized": return "Operation Not Authorized"
        case "NoSuchAdapter": return "No such adapter"
        case "AgentNotAvailable": return "Agent Not Available"
        case "NotReady": return "Resource Not Ready"
        default: return nil
        }
    }

    /// `org.bluez.Error.InvalidArguments` "Invalid arguments in method call".
    public static let invalidArguments = DBusError("org.bluez.Error.InvalidArguments", "Invalid arguments in method call")
    /// `org.bluez.Error.InvalidArguments` with a specific message.
    public static func invalidArguments(_ message: String) -> DBusError {
        DBusError("org.bluez.Error.InvalidArguments", message)
    }
    /// `org.bluez.Error.InProgress` "Operation already in progress" (btd_error_busy).
    public static let busy = DBusError("org.bluez.Error.InProgress", "Operation already in progress")
    /// `org.bluez.Error.InProgress` "In Progress".
    public static let inProgress = DBusError("org.bluez.Error.InProgress", "In Progress")
    /// `org.bluez.Error.AlreadyExists` "Already Exists".
    public static let alreadyExists = DBusError("org.bluez.Error.AlreadyExists", "Already Exists")
    /// `org.bluez.Error.AlreadyConnected` "Already Connected".
    public static let alreadyConnected = DBusError("org.bluez.Error.AlreadyConnected", "Already Connected")
    /// `org.bluez.Error.NotSupported` "Operation is not supported".
    public static let notSupported = DBusError("org.bluez.Error.NotSupported", "Operation is not supported")
    /// `org.bluez.Error.NotConnected` "Not Connected".
    public static let notConnected = DBusError("org.bluez.Error.NotConnected", "Not Connected")
    /// `org.bluez.Error.DoesNotExist` "Does Not Exist".
    public static let doesNotExist = DBusError("org.bluez.Error.DoesNotExist", "Does Not Exist")
    /// `org.bluez.Error.DoesNotExist` with a specific message.
    public static func doesNotExist(_ message: String) -> DBusError {
        DBusError("org.bluez.Error.DoesNotExist", message)
    }
    /// `org.bluez.Error.AuthenticationFailed` "Authentication Failed": a pairing that failed (wrong
    /// passkey, the agent's refusal, no agent, the peripheral's refusal; device.c
    /// `new_authentication_return`, any status but those below).
    public static let authenticationFailed = DBusError("org.bluez.Error.AuthenticationFailed", "Authentication Failed")
    /// `org.bluez.Error.AuthenticationCanceled` "Authentication Canceled": `CancelPairing`, or the
    /// link went away during the pairing (MGMT status cancelled / disconnected).
    public static let authenticationCanceled = DBusError("org.bluez.Error.AuthenticationCanceled", "Authentication Canceled")
    /// `org.bluez.Error.NotReady` "Resource Not Ready".
    public static let notReady = DBusError("org.bluez.Error.NotReady", "Resource Not Ready")
    /// `org.bluez.Error.NotAuthorized` "Operation Not Authorized".
    public static let notAuthorized = DBusError("org.bluez.Error.NotAuthorized", "Operation Not Authorized")
    /// `org.bluez.Error.NotPermitted` with a message ("Read not permitted", "Write not permitted").
    public static func notPermitted(_ message: String) -> DBusError {
        DBusError("org.bluez.Error.NotPermitted", message)
    }
    /// `org.bluez.Error.Failed` with a message.
    public static func failed(_ message: String) -> DBusError {
        DBusError("org.bluez.Error.Failed", message)
    }

    /// `org.bluez.Error.Failed` "Operation failed": a GATT request that ended without an ATT
    /// response, e.g. because the link dropped while it was pending (`create_gatt_dbus_error(0)`).
    public static let operationFailed = DBusError("org.bluez.Error.Failed", "Operation failed")

    /// The error `ReadValue`/`WriteValue` return when the peripheral answers with ATT error `code`
    /// (gatt-client.c `create_gatt_dbus_error`).
    public static func att(_ code: UInt8) -> DBusError {
        switch code {
        case 0x00: return operationFailed
        case 0x02: return notPermitted("Read not permitted")
        case 0x03: return notPermitted("Write not permitted")
        case 0x05, 0x0f, 0x0c: return notPermitted("Not paired")
        case 0x07: return invalidArguments("Invalid offset")
        case 0x0d: return invalidArguments("Invalid Length")
        case 0x08: return notAuthorized
        case 0x06: return notSupported
        default:
            return DBusError("org.bluez.Error.Failed", "Operation failed with ATT error: 0x" + Hex.encode([code]))
        }
    }
}
