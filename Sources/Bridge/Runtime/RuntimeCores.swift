import BlueZ
import BridgeBase
import RuntimeCore

// The runtime's pure cores (RuntimeCore) at the bridge's clock: the executors here run them with
// ``BridgeInstant``s. The names are the cores' own, so that executor code reads as the cores' does.

/// A peripheral's session decisions (``RuntimeCore/SessionCore``).
typealias SessionCore = RuntimeCore.SessionCore<BridgeInstant>
/// The supervisor's decisions (``RuntimeCore/SupervisorCore``).
typealias SupervisorCore = RuntimeCore.SupervisorCore<BridgeInstant>
/// This bridge's part of a cluster (``RuntimeCore/ClusterCore``).
typealias ClusterCore = RuntimeCore.ClusterCore<BridgeInstant>
/// A `/set` or `/get` on its way to a session.
typealias PendingCommand = RuntimeCore.PendingCommand<BridgeInstant>
/// What a session's mailbox carries.
typealias SessionInput = RuntimeCore.SessionInput<BridgeInstant>
/// A device a session is created for.
typealias SessionDevice = RuntimeCore.SessionDevice<BridgeInstant>

extension BluetoothError {
    /// The cores' view of a BlueZ client error.
    init(_ error: BlueZError) {
        let code: Code
        switch error.code {
        case .inProgress: code = .inProgress
        case .alreadyConnected: code = .alreadyConnected
        case .alreadyExists: code = .alreadyExists
        case .notAuthorized: code = .notAuthorized
        case .authenticationFailed: code = .authenticationFailed
        case .accessDenied: code = .accessDenied
        default: code = .other
        }
        self.init(code: code, name: error.name, message: error.message)
    }
}

extension DeviceSnapshot {
    /// The cores' view of a BlueZ client device snapshot.
    init(_ device: BlueZDevice) {
        self.init(
            path: device.path, address: device.address, addressType: device.addressType.rawValue, name: device.name,
            alias: device.alias, rssi: device.rssi, uuids: device.uuids, connected: device.connected,
            servicesResolved: device.servicesResolved, paired: device.paired, bonded: device.bonded, serviceData: device.serviceData,
            manufacturerData: device.manufacturerData)
    }
}
/// An operation of a session's GATT queue.
typealias GattOperation = RuntimeCore.GattOperation<BridgeInstant>
/// How a GATT operation ended.
typealias GattOutcome = RuntimeCore.GattOutcome<BridgeInstant>
/// An advertisement device's session decisions (``RuntimeCore/AdvertisementCore``).
typealias AdvertisementCore = RuntimeCore.AdvertisementCore<BridgeInstant>
/// A managed device as the supervisor records it (the registry's entries hold one).
typealias DeviceRecord = RuntimeCore.DeviceRecord
