import BlueZ
import BridgeBase
import DBusKit

@testable import Bridge

extension FakeCentral {
    var isAvailable: Bool { true }

    func start() async { announce() }

    func stop() { finishEvents() }

    func withTree<R>(_ body: (BlueZObjectTree) -> R) -> R {
        treeSnapshot(body)
    }

    /// Recorded as `Set` on the adapter's path; the adapter's `Powered` follows (as BlueZ's would).
    func setPowered(adapter: String, _ on: Bool) async throws(BlueZError) {
        _ = try await record("Set", adapter, bytes: [on ? 1 : 0])
        setProperties(adapter, BlueZ.adapter, ["Powered": .bool(on)])
    }

    func setDiscoveryFilter(adapter: String, uuids: [String], duplicateData: Bool) async throws(BlueZError) {
        // The filter is in the recorded path: "<adapter> uuids=[…] duplicate=<bool>".
        _ = try await record("SetDiscoveryFilter", "\(adapter) uuids=\(uuids) duplicate=\(duplicateData)")
    }

    func registerAdvertisementMonitor(adapter: String, patterns: [AdvertisementMonitorPattern]) async throws(BlueZError) {
        _ = try await record("RegisterMonitor", adapter, bytes: patterns.flatMap { [$0.adType] + $0.content })
    }

    func startDiscovery(adapter: String) async throws(BlueZError) {
        _ = try await record("StartDiscovery", adapter)
        setProperties(adapter, BlueZ.adapter, ["Discovering": .bool(true)])
    }

    func stopDiscovery(adapter: String) async throws(BlueZError) {
        _ = try await record("StopDiscovery", adapter)
        setProperties(adapter, BlueZ.adapter, ["Discovering": .bool(false)])
    }

    func removeDevice(adapter: String, device: String) async throws(BlueZError) {
        _ = try await record("RemoveDevice", device)
    }

    func registerAgent(capability: String, handler: @escaping BlueZAgentHandler) async throws(BlueZError) {
        _ = try await record("RegisterAgent", capability)
        setAgent(handler)
    }

    /// Pair: the bond is made (Paired, Bonded) unless a test failed or held the call.
    func pair(device: String, timeout: Duration) async throws(BlueZError) {
        _ = try await record("Pair", device, timeout: timeout)
        setProperties(device, BlueZ.device, ["Paired": .bool(true), "Bonded": .bool(true)])
    }

    func setTrusted(device: String, _ trusted: Bool) async throws(BlueZError) {
        _ = try await record("SetTrusted", device, bytes: [trusted ? 1 : 0])
        setProperties(device, BlueZ.device, ["Trusted": .bool(trusted)])
    }

    func connectDevice(adapter: String, address: String, addressType: String) async throws(BlueZError) -> String {
        _ = try await record("ConnectDevice", adapter)
        throw BlueZError(code: .doesNotExist, name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no ConnectDevice")
    }

    /// Connect: the link comes up and the cached services resolve at once.
    func connect(device: String, timeout: Duration) async throws(BlueZError) {
        _ = try await record("Connect", device, timeout: timeout)
        // As BlueZ: no link through an adapter that is powered off.
        let adapter = "/" + device.split(separator: "/").prefix(3).joined(separator: "/")
        if withTree({ $0.properties(path: adapter, interface: BlueZ.adapter)?["Powered"]?.bool }) == false {
            throw BlueZError(code: .notReady, name: "org.bluez.Error.NotReady", message: "Resource Not Ready")
        }
        linkUp(device)
        setProperties(device, BlueZ.device, ["Connected": .bool(true)])
        setProperties(device, BlueZ.device, ["ServicesResolved": .bool(true)])
    }

    func disconnect(device: String) async throws(BlueZError) {
        _ = try await record("Disconnect", device)
        dropLink(device)
    }

    func startNotify(characteristic: String) async throws(BlueZError) {
        _ = try await record("StartNotify", characteristic, gatt: true)
    }

    /// Refused with `NotSupported` unless ``acquireSupported``, as by a BlueZ without it.
    func acquireNotify(characteristic: String) async throws(BlueZError) -> Int {
        _ = try await record("AcquireNotify", characteristic, gatt: true)
        guard acquireSupported else {
            throw BlueZError(code: .notSupported, name: "org.bluez.Error.NotSupported", message: "Operation is not supported")
        }
        acquire(characteristic)
        return 247
    }

    func releaseNotify(characteristic: String) -> Bool {
        release(characteristic, recording: true)
    }

    func stopNotify(characteristic: String) async throws(BlueZError) {
        _ = try await record("StopNotify", characteristic)
    }

    func readValue(characteristic: String, timeout: Duration?) async throws(BlueZError) -> [UInt8] {
        try await record("ReadValue", characteristic, timeout: timeout, gatt: true)
    }

    /// Answered with the value given to ``addDescriptor(characteristic:uuid:value:)``.
    func readDescriptor(_ descriptor: String, timeout: Duration?) async throws(BlueZError) -> [UInt8] {
        try await record("ReadDescriptor", descriptor, timeout: timeout, gatt: true)
    }

    func writeValue(
        characteristic: String, value: [UInt8], type: GattWriteType, timeout: Duration?
    ) async throws(BlueZError) {
        _ = try await record("WriteValue", characteristic, bytes: value, timeout: timeout, gatt: true)
    }
}
