import BridgeBase
import BlueZ
import DBusKit
import Synchronization

@testable import Bridge

/// An in-memory BlueZ: an object tree the test builds, calls that are recorded (with the fake
/// clock's time) and answered as the test says: at once, held until released, or failing.
final class FakeCentral: ObjectTreeCentral {
    /// One recorded call.
    struct Call: Sendable, CustomStringConvertible {
        var method: String
        var path: String
        var at: BridgeInstant
        var bytes: [UInt8] = []
        var description: String { "\(method) \(path)\(bytes.isEmpty ? "" : " " + bytes.map { String($0, radix: 16) }.joined())" }
    }

    private struct Held {
        var key: String
        var continuation: CheckedContinuation<Result<[UInt8], BlueZError>, Never>
    }

    private struct State {
        var tree = BlueZObjectTree()
        var valueHandler: GattValueHandler?
        var advertisementHandler: BlueZAdvertisementHandler?
        var calls: [Call] = []
        var values: [String: [UInt8]] = [:]
        /// Keys (`method path`) whose calls wait until released.
        var holds: Set<String> = []
        var held: [Int: Held] = [:]
        var nextID = 0
        /// Errors for the next calls of a key, in order.
        var failures: [String: [BlueZError]] = [:]
        /// GATT operations under way, per device path.
        var gattInFlight: [String: Int] = [:]
        var maxGattInFlight: [String: Int] = [:]
        var links = 0
        var maxLinks = 0
        /// The most links one address had at once, across adapters (SPEC §10: one).
        var maxLinksPerAddress = 0
        /// Characteristics with an `AcquireNotify` socket.
        var acquired: Set<String> = []
        var acquireSupported = false
        /// `stop()` was called (the events are finished).
        var stopped = false
        /// The registered pairing agent.
        var agent: BlueZAgentHandler?
    }

    let clock: FakeClock
    private let state = Mutex(State())
    let events: AsyncStream<BlueZEvent>
    private let continuation: AsyncStream<BlueZEvent>.Continuation
    static let adapter = "/org/bluez/hci0"

    init(clock: FakeClock) {
        self.clock = clock
        (events, continuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
        add(path: Self.adapter, BlueZ.adapter, ["Address": .string("00:11:22:33:44:55"), "Powered": .bool(true), "Discovering": .bool(false)])
    }

    // MARK: Building the tree

    func add(path: String, _ interface: String, _ properties: [String: DBusValue], signal: Bool = false) {
        let value = DBusValue.dictionary(key: "s", value: "a{sv}", [DBusDictEntry(.string(interface), .stringVariantDict(properties))])
        state.withLock { _ = $0.tree.interfacesAdded(path: path, interfaces: value) }
        if signal { continuation.yield(.interfacesAdded(path: path, interfaces: [interface])) }
    }

    /// A peripheral with its GATT database (cached by "BlueZ", as for a known device).
    /// `characteristics`: (service UUID, characteristic UUID, flags, value).
    @discardableResult
    func addDevice(
        _ address: String, name: String, services: [String: [(uuid: String, flags: [String], value: [UInt8])]],
        signal: Bool = false, adapter: String = FakeCentral.adapter, rssi: Int = -50, addressType: String = "public"
    ) -> String {
        let path = BlueZ.devicePath(adapter: adapter, address: address)
        let serviceUUIDs = services.keys.sorted().map(Self.long)
        add(path: path, BlueZ.device, [
            "Address": .string(address), "AddressType": .string(addressType), "Name": .string(name),
            "UUIDs": .stringArray(serviceUUIDs), "Connected": .bool(false), "ServicesResolved": .bool(false),
            "Adapter": .objectPath(adapter), "RSSI": .int16(Int16(rssi)),
        ], signal: signal)
        for (i, service) in services.keys.sorted().enumerated() {
            let sp = path + "/service" + String(0x10 + i * 0x10, radix: 16)
            add(path: sp, BlueZ.gattService, ["UUID": .string(Self.long(service)), "Primary": .bool(true), "Device": .objectPath(path)])
            for (j, c) in services[service]!.enumerated() {
                let cp = sp + "/char" + String(0x11 + i * 0x10 + j, radix: 16)
                add(path: cp, BlueZ.gattCharacteristic, [
                    "UUID": .string(Self.long(c.uuid)), "Service": .objectPath(sp), "Flags": .stringArray(c.flags),
                    "Notifying": .bool(false),
                ])
                state.withLock { $0.values[cp] = c.value }
            }
        }
        return path
    }

    /// A descriptor below a characteristic (path `…/descNNNN`), read as `value`; returns its path.
    @discardableResult
    func addDescriptor(characteristic: String, uuid: String, value: [UInt8], signal: Bool = false) -> String {
        let n = withTree { $0.paths(with: BlueZ.gattDescriptor, below: characteristic).count }
        let path = characteristic + "/desc" + String(0xd0 + n, radix: 16)
        add(path: path, BlueZ.gattDescriptor, ["UUID": .string(Self.long(uuid)), "Characteristic": .objectPath(characteristic)],
            signal: signal)
        state.withLock { $0.values[path] = value }
        return path
    }

    static func long(_ short: String) -> String {
        short.count == 4 ? "0000\(short)-0000-1000-8000-00805f9b34fb" : short.lowercased()
    }

    /// The object path of a characteristic by its UUID (short or long).
    func characteristicPath(device: String, _ uuid: String) -> String {
        withTree { t in
            t.paths(with: BlueZ.gattCharacteristic, below: device).first { t.characteristic($0)?.uuid.uuidString == Self.long(uuid) } ?? ""
        }
    }

    func setAgent(_ handler: BlueZAgentHandler?) { state.withLock { $0.agent = handler } }

    /// Asks the registered agent as bluetoothd would; nil when none is registered.
    func askAgent(_ request: BlueZAgentRequest) -> BlueZAgentAnswer? {
        state.withLock { $0.agent }?(request)
    }

    func setProperties(_ path: String, _ interface: String, _ changed: [String: DBusValue]) {
        state.withLock { $0.tree.propertiesChanged(path: path, interface: interface, changed: .stringVariantDict(changed), invalidated: []) }
        continuation.yield(.propertiesChanged(path: path, interface: interface, changed: Array(changed.keys)))
    }

    /// A notification (or any value BlueZ reports) of a characteristic.
    func notify(_ path: String, _ value: [UInt8]) {
        state.withLock { $0.valueHandler }?(path, value)
    }

    /// Whether `AcquireNotify` succeeds (else `NotSupported`).
    var acquireSupported: Bool {
        get { state.withLock { $0.acquireSupported } }
        set { state.withLock { $0.acquireSupported = newValue } }
    }

    /// Characteristics with an acquired socket.
    var acquired: Set<String> { state.withLock { $0.acquired } }

    func acquire(_ characteristic: String) {
        state.withLock { _ = $0.acquired.insert(characteristic) }
    }

    func release(_ characteristic: String, recording: Bool = false) -> Bool {
        state.withLock { s in
            if recording { s.calls.append(Call(method: "ReleaseNotify", path: characteristic, at: clock.now)) }
            return s.acquired.remove(characteristic) != nil
        }
    }

    /// BlueZ closes an acquired socket (the link went down, or it ended the notifications).
    func hangUp(_ characteristic: String) {
        guard release(characteristic) else { return }
        continuation.yield(.notificationsReleased(characteristic: characteristic))
    }

    /// Drops the link as a peripheral going away would.
    func dropLink(_ device: String) {
        for c in acquired where c.hasPrefix(device + "/") { hangUp(c) }
        let wasUp = state.withLock { s -> Bool in
            let up = s.tree.device(device)?.connected ?? false
            if up { s.links -= 1 }
            return up
        }
        guard wasUp else { return }
        setProperties(device, BlueZ.device, ["ServicesResolved": .bool(false)])
        setProperties(device, BlueZ.device, ["Connected": .bool(false)])
    }

    /// BlueZ drops a device object (a temporary device that went quiet).
    func dropObject(_ path: String) {
        state.withLock { $0.tree.interfacesRemoved(path: path, interfaces: [BlueZ.device]) }
        continuation.yield(.interfacesRemoved(path: path, interfaces: [BlueZ.device]))
    }

    func announce() { continuation.yield(.serviceAvailable) }
    func finishEvents() {
        state.withLock { $0.stopped = true }
        continuation.finish()
    }

    /// Whether the runtime stopped following BlueZ (``BluetoothCentral/stop()``: its events ended).
    var isStopped: Bool { state.withLock { $0.stopped } }

    func treeSnapshot<R>(_ body: (BlueZObjectTree) -> R) -> R {
        state.withLock { body($0.tree) }
    }

    func setValueHandler(_ handler: GattValueHandler?) {
        state.withLock { $0.valueHandler = handler }
    }

    func setAdvertisementHandler(_ handler: BlueZAdvertisementHandler?) {
        state.withLock { $0.advertisementHandler = handler }
    }

    /// An advertisement of `device` as BlueZ reports it while discovering: the properties change,
    /// the handler gets the report, the supervisor the event.
    func advertise(
        _ device: String, rssi: Int = -60, serviceData: [String: [UInt8]] = [:], manufacturerData: [UInt16: [UInt8]] = [:]
    ) {
        var changed: [String: DBusValue] = ["RSSI": .int16(Int16(rssi))]
        if !serviceData.isEmpty {
            changed["ServiceData"] = .dictionary(
                key: "s", value: "v", serviceData.map { DBusDictEntry(.string(Self.long($0.key)), .variant(.bytes($0.value))) })
        }
        if !manufacturerData.isEmpty {
            changed["ManufacturerData"] = .dictionary(
                key: "q", value: "v", manufacturerData.map { DBusDictEntry(.uint16($0.key), .variant(.bytes($0.value))) })
        }
        let (report, handler) = state.withLock { s -> (BlueZAdvertisement?, BlueZAdvertisementHandler?) in
            s.tree.propertiesChanged(path: device, interface: BlueZ.device, changed: .stringVariantDict(changed), invalidated: [])
            guard let d = s.tree.device(device) else { return (nil, nil) }
            return (
                BlueZAdvertisement(
                    path: device, address: d.address, rssi: d.rssi, serviceData: d.serviceData,
                    manufacturerData: d.manufacturerData, dataChanged: !serviceData.isEmpty || !manufacturerData.isEmpty,
                    addressType: d.addressType, name: d.localName, serviceUUIDs: d.uuids),
                s.advertisementHandler
            )
        }
        if let report, let handler, handler(report) { return }
        continuation.yield(.propertiesChanged(path: device, interface: BlueZ.device, changed: Array(changed.keys)))
    }

    func linkUp(_ device: String) {
        state.withLock { s in
            if !(s.tree.device(device)?.connected ?? false) {
                s.links += 1
                s.maxLinks = max(s.maxLinks, s.links)
                let address = BlueZDevice.address(fromPath: device)
                let others = s.tree.paths(with: BlueZ.device).filter {
                    $0 != device && BlueZDevice.address(fromPath: $0) == address && s.tree.device($0)?.connected == true
                }
                s.maxLinksPerAddress = max(s.maxLinksPerAddress, others.count + 1)
            }
        }
    }

    /// The most links one address had at once, across adapters.
    var maxLinksPerAddress: Int { state.withLock { $0.maxLinksPerAddress } }

    // MARK: Several adapters

    /// Another adapter (`/org/bluez/hci1`), powered, with a signal.
    func addAdapter(_ path: String, powered: Bool = true) {
        add(path: path, BlueZ.adapter, ["Address": .string("00:11:22:33:44:66"), "Powered": .bool(powered), "Discovering": .bool(false)], signal: true)
    }

    /// An adapter powered off by someone: its links drop, then `Powered` goes false.
    func powerOff(_ adapter: String) {
        let devices = withTree { t in t.devices(adapter: adapter).map(\.path) }
        for device in devices { dropLink(device) }
        setProperties(adapter, BlueZ.adapter, ["Powered": .bool(false), "Discovering": .bool(false)])
    }

    // MARK: Scripting calls

    /// Calls of `method` on `path` wait until ``release(_:_:value:)`` (or their timeout).
    func hold(_ method: String, _ path: String) { state.withLock { _ = $0.holds.insert("\(method) \(path)") } }

    /// Lets held calls of `method` on `path` go (answering `value` to reads) and stops holding.
    func release(_ method: String, _ path: String, value: [UInt8]? = nil, error: BlueZError? = nil) {
        let key = "\(method) \(path)"
        let woken: [Held] = state.withLock { s in
            s.holds.remove(key)
            let ids = s.held.filter { $0.value.key == key }.map(\.key)
            return ids.compactMap { s.held.removeValue(forKey: $0) }
        }
        for h in woken { h.continuation.resume(returning: error.map { .failure($0) } ?? .success(value ?? [])) }
    }

    func failNext(_ method: String, _ path: String, _ error: BlueZError) {
        state.withLock { $0.failures["\(method) \(path)", default: []].append(error) }
    }

    func setValue(_ path: String, _ value: [UInt8]) { state.withLock { $0.values[path] = value } }

    var calls: [Call] { state.withLock { $0.calls } }
    func calls(_ method: String) -> [Call] { calls.filter { $0.method == method } }
    var maxLinks: Int { state.withLock { $0.maxLinks } }
    var links: Int { state.withLock { $0.links } }
    func maxGattInFlight(_ device: String) -> Int { state.withLock { $0.maxGattInFlight[device] ?? 0 } }
    var heldCount: Int { state.withLock { $0.held.count } }

    /// Records a call and answers it as scripted: a scripted failure, a hold, or at once.
    func record(_ method: String, _ path: String, bytes: [UInt8] = [], timeout: Duration? = nil, gatt: Bool = false)
        async throws(BlueZError) -> [UInt8]
    {
        if let executor = clock.executor, !executor.runsCurrentJob { executor.noteEscape("FakeCentral: \(method) \(path)") }
        let key = "\(method) \(path)"
        let device = BlueZNames.devicePath(of: path) ?? path
        let (failure, holding, value) = state.withLock { s -> (BlueZError?, Bool, [UInt8]) in
            s.calls.append(Call(method: method, path: path, at: clock.now, bytes: bytes))
            if gatt {
                s.gattInFlight[device, default: 0] += 1
                s.maxGattInFlight[device] = max(s.maxGattInFlight[device] ?? 0, s.gattInFlight[device]!)
            }
            let failure = s.failures[key]?.isEmpty == false ? s.failures[key]!.removeFirst() : nil
            return (failure, s.holds.contains(key), s.values[path] ?? [])
        }
        defer { if gatt { state.withLock { $0.gattInFlight[device, default: 1] -= 1 } } }
        if let failure { throw failure }
        guard holding else { return value }
        let result = await waitHeld(key, timeout: timeout)
        return try result.get()
    }

    private func waitHeld(_ key: String, timeout: Duration?) async -> Result<[UInt8], BlueZError> {
        let id = state.withLock { s -> Int in
            s.nextID += 1
            return s.nextID
        }
        let clock = self.clock
        let deadline = timeout.map { clock.now.advanced(by: $0) }
        return await withTaskGroup(of: Result<[UInt8], BlueZError>?.self) { group in
            group.addTask {
                await withTaskCancellationHandler {
                    await withCheckedContinuation { c in
                        self.state.withLock { $0.held[id] = Held(key: key, continuation: c) }
                    }
                } onCancel: {
                    let h = self.state.withLock { $0.held.removeValue(forKey: id) }
                    h?.continuation.resume(returning: .failure(Self.cancelled))
                }
            }
            if let deadline {
                group.addTask {
                    do { try await clock.sleep(until: deadline) } catch { return nil }
                    return .failure(BlueZError(code: .timeout, name: "org.freedesktop.DBus.Error.NoReply", message: "no reply"))
                }
            }
            let first = await group.next()! ?? .failure(Self.cancelled)
            group.cancelAll()
            return first
        }
    }

    static let cancelled = BlueZError(code: .other, name: "org.freedesktop.DBus.Error.Cancelled", message: "cancelled")
}
