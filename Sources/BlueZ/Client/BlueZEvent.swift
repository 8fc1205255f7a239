import DBusKit

/// Something that changed in BlueZ, in the order it happened.
public enum BlueZEvent: Sendable {
    /// `org.bluez` appeared on the bus (or the client started) and the tree was loaded.
    case serviceAvailable
    /// `org.bluez` left the bus: every object is gone.
    case serviceLost
    /// An object got interfaces.
    case interfacesAdded(path: String, interfaces: [String])
    /// An object lost interfaces.
    case interfacesRemoved(path: String, interfaces: [String])
    /// Properties of an object changed (the tree is already updated).
    case propertiesChanged(path: String, interface: String, changed: [String])
    /// The notification socket of a characteristic (``BlueZClient/acquireNotify(characteristic:)``)
    /// hung up: the link went down, or BlueZ ended the notifications.
    case notificationsReleased(characteristic: String)
}
