import BlueZ
import BridgeBase

/// What the runtime needs of BlueZ: what its object tree holds and how it changes, values as they
/// arrive, and the calls of the central role. ``BlueZClient`` is the real one; tests use an
/// in-memory fake. Its values are types of their own (``BlueZDevice``, ``BluetoothAdapterState``,
/// ``BluetoothDeviceObjects``, ``GattValueHandler``, ``BlueZAdvertisementHandler``,
/// ``AdvertisementMonitorPattern``, ``GattWriteType``), never D-Bus values or the tree itself.
///
/// Every call completes (with an error when the bus goes away) and is cancelled with its task.
public protocol BluetoothCentral: Sendable {
    /// Changes of the object tree, in order; one consumer.
    var events: AsyncStream<BlueZEvent> { get }
    /// Whether `org.bluez` is on the bus and its tree is loaded.
    var isAvailable: Bool { get }
    /// Starts following BlueZ (loads the tree; ``events`` reports `serviceAvailable`).
    func start() async
    /// Stops following BlueZ and finishes ``events``.
    func stop()
    /// The adapter objects, by path.
    func adapters() -> [BluetoothAdapterState]
    /// The device object at `path` as BlueZ last reported it; nil when there is none.
    func device(_ path: String) -> BlueZDevice?
    /// The device objects of one adapter (its object path).
    func devices(adapter: String) -> [BlueZDevice]
    /// A device object with its GATT objects, read at once; nil when there is no device object.
    func deviceObjects(_ path: String) -> BluetoothDeviceObjects?
    /// How many objects BlueZ exports.
    var objectCount: Int { get }
    /// Where characteristic values go, straight from the I/O thread.
    func setValueHandler(_ handler: GattValueHandler?)
    /// Where advertisements (`RSSI`, `ServiceData`, `ManufacturerData` changes) go, straight
    /// from the I/O thread.
    func setAdvertisementHandler(_ handler: BlueZAdvertisementHandler?)

    /// Sets the adapter's `Powered` property.
    func setPowered(adapter: String, _ on: Bool) async throws(BlueZError)
    func setDiscoveryFilter(adapter: String, uuids: [String], duplicateData: Bool) async throws(BlueZError)
    /// Passive scanning: registers an advertisement monitor with these or-patterns.
    func registerAdvertisementMonitor(adapter: String, patterns: [AdvertisementMonitorPattern]) async throws(BlueZError)
    func startDiscovery(adapter: String) async throws(BlueZError)
    func stopDiscovery(adapter: String) async throws(BlueZError)
    func removeDevice(adapter: String, device: String) async throws(BlueZError)
    func connectDevice(adapter: String, address: String, addressType: String) async throws(BlueZError) -> String
    func connect(device: String, timeout: Duration) async throws(BlueZError)
    func disconnect(device: String) async throws(BlueZError)
    func startNotify(characteristic: String) async throws(BlueZError)
    /// `AcquireNotify`: values then come over a socket to the value handler; returns the MTU.
    @discardableResult
    func acquireNotify(characteristic: String) async throws(BlueZError) -> Int
    /// Closes an acquired socket (BlueZ stops the notifications); whether there was one.
    @discardableResult
    func releaseNotify(characteristic: String) -> Bool
    func stopNotify(characteristic: String) async throws(BlueZError)
    func readValue(characteristic: String, timeout: Duration?) async throws(BlueZError) -> [UInt8]
    /// `GattDescriptor1.ReadValue` (a Presentation Format or User Description, SPEC §11).
    func readDescriptor(_ descriptor: String, timeout: Duration?) async throws(BlueZError) -> [UInt8]
    func writeValue(
        characteristic: String, value: [UInt8], type: GattWriteType, timeout: Duration?
    ) async throws(BlueZError)

    /// Exports the pairing agent and registers it as the default agent with `capability` (SPEC §11); again after
    /// bluetoothd restarted. `handler` answers its requests on the I/O thread.
    func registerAgent(capability: String, handler: @escaping BlueZAgentHandler) async throws(BlueZError)
    /// `Device1.Pair`, bounded by `timeout`.
    func pair(device: String, timeout: Duration) async throws(BlueZError)
    /// `Device1.Trusted`.
    func setTrusted(device: String, _ trusted: Bool) async throws(BlueZError)
}

extension BlueZClient: ObjectTreeCentral {}
