import BridgeCore

@testable import RuntimeCore

/// The single-adapter spelling of the ``SupervisorCore`` inputs and actions that carry an adapter since
/// several adapters may be in use (SPEC §10): the tests written for one adapter (`hci0`, the default) read as
/// they did.
extension SupervisorCore.Tree {
    /// A tree whose adapter `hci0` is `adapter` (nil: missing); `adapters`: the paths of other adapters BlueZ has.
    init(bluezAvailable: Bool, adapter: Adapter?, devices: [DeviceSnapshot] = [], adapters: [String] = []) {
        var all: [String: Adapter] = [:]
        for path in adapters {
            all[BlueZNames.adapterName(of: path)] = Adapter(powered: false, discovering: false, address: nil, offersMonitor: false)
        }
        if let adapter { all["hci0"] = adapter }
        self.init(bluezAvailable: bluezAvailable, adapters: all, devices: devices)
    }
}

extension SupervisorCore.Event {
    static var adapterAdded: Self { .adapterAdded("hci0") }
    static var adapterRemoved: Self { .adapterRemoved("hci0") }
    static func adapterChanged(_ changed: [String]) -> Self { .adapterChanged("hci0", changed) }
    static func powerFinished(error: BluetoothError?) -> Self { .powerFinished(adapter: "hci0", error: error) }
    static func discoveryFinished(error: BluetoothError?) -> Self { .discoveryFinished(adapter: "hci0", error: error) }
    static func monitorRegistered(error: BluetoothError?) -> Self { .monitorRegistered(adapter: "hci0", error: error) }
}

extension SupervisorCore.Action {
    static var powerOn: Self { .powerOn(adapter: "hci0") }
    static var registerMonitor: Self { .registerMonitor(adapter: "hci0") }
    static func startDiscovery(uuids: [String], duplicateData: Bool) -> Self {
        .startDiscovery(adapter: "hci0", uuids: uuids, duplicateData: duplicateData)
    }
    static var restartDiscovery: Self { .restartDiscovery(adapter: "hci0") }
    static var stopDiscovery: Self { .stopDiscovery(adapter: "hci0") }
}

extension SupervisorCore {
    /// `hci0` is present, powered and in use.
    var adapterReady: Bool { radios["hci0"]?.ready == true }
    /// `hci0`'s scan.
    var discovery: DiscoveryState { radios["hci0"]?.discovery ?? DiscoveryState() }
}
