import BridgeBase
import DBusKit
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A typed client of BlueZ's D-Bus API: the object tree, discovery, connections and GATT.
///
/// ``start()`` subscribes to BlueZ's signals and loads `GetManagedObjects`; from then on
/// ``tree`` mirrors BlueZ's objects and ``events`` reports each change. Characteristic values
/// that arrive as `PropertiesChanged` on `Value` go to the ``valueHandler`` straight from the
/// D-Bus I/O thread, without an event, so notifications take the shortest path.
public final class BlueZClient: Sendable {
    struct State {
        var tree = BlueZObjectTree()
        var available = false
        var tasks: [Task<Void, Never>] = []
        var subscriptions: [DBusConnection.SignalSubscription] = []
        var valueHandler: GattValueHandler?
        var advertisementHandler: BlueZAdvertisementHandler?
        /// Per device object, what the last advertisement report parsed (BlueZClient+Peek):
        /// dropped whenever the object changes otherwise.
        var reportBasis: [String: ReportBasis] = [:]
        /// The exported advertisement monitor (BlueZClient+Monitor), kept while the client lives.
        /// The objects the client exports (the advertisement monitor, the pairing agent): one server per
        /// connection, as it is the connection's handler of incoming calls.
        var objectServer: DBusObjectServer?
    }

    /// The D-Bus connection.
    public let connection: DBusConnection
    let logger: Logger
    let state: Mutex<State>
    let eventContinuation: AsyncStream<BlueZEvent>.Continuation
    /// Changes, in order. One consumer.
    public let events: AsyncStream<BlueZEvent>
    /// Timeout of ordinary method calls.
    public let callTimeout: Duration
    /// The sockets of `AcquireNotify`, polled on the connection's loop.
    let notificationSockets: NotificationSockets

    /// Creates a client on a connection to the bus BlueZ is on.
    public init(connection: DBusConnection, logger: Logger, callTimeout: Duration = .seconds(25)) {
        self.connection = connection
        self.logger = logger
        self.callTimeout = callTimeout
        state = Mutex(State())
        (events, eventContinuation) = AsyncStream<BlueZEvent>.makeStream(bufferingPolicy: .unbounded)
        notificationSockets = NotificationSockets(loop: connection.pollLoop)
        let continuation = eventContinuation
        notificationSockets.setOnClosed { [logger] path in
            logger.debug("notification socket of \(path) hung up")
            continuation.yield(.notificationsReleased(characteristic: path))
        }
    }

    /// Sets the handler of characteristic values (from signals and from notification sockets).
    public func setValueHandler(_ handler: GattValueHandler?) {
        state.withLock { $0.valueHandler = handler }
        notificationSockets.setHandler(handler)
    }

    /// The client's object server (created on first use).
    var objectServer: DBusObjectServer {
        state.withLock { s in
            if let server = s.objectServer { return server }
            let server = DBusObjectServer(connection: connection, logger: logger)
            s.objectServer = server
            return server
        }
    }

    /// Sets the handler of advertisements.
    public func setAdvertisementHandler(_ handler: BlueZAdvertisementHandler?) {
        state.withLock { $0.advertisementHandler = handler }
    }

    /// A copy of the object tree.
    public var tree: BlueZObjectTree { state.withLock { $0.tree } }

    /// Reads the tree: a copy taken under the lock (the tree is copy-on-write, so this costs a
    /// reference count), read outside it.
    public func withTree<R>(_ body: (BlueZObjectTree) -> R) -> R {
        body(tree)
    }

    /// Whether `org.bluez` is on the bus and its tree is loaded.
    public var isAvailable: Bool { state.withLock { $0.available } }

    /// Subscribes to BlueZ's signals and to its name's owner changes, then loads the tree if
    /// BlueZ is there. Returns at once; if BlueZ is not on the bus, ``events`` reports
    /// ``BlueZEvent/serviceAvailable`` when it arrives.
    public func start() async {
        // BlueZ's signals are handled on the D-Bus I/O thread: values reach the value handler
        // without a task hop, and the tree is updated in signal order.
        let sub = connection.addSignalHandler(
            DBusMatchRule(sender: BlueZ.service),
            peek: { [weak self] path, interface, member, arguments in
                self?.peek(path: path, interface: interface, member: member, arguments: arguments) ?? false
            }
        ) { [weak self] s in
            self?.handle(s)
        }
        let ownerSignals = connection.signals(DBusMatchRule(
            sender: "org.freedesktop.DBus", interface: "org.freedesktop.DBus", member: "NameOwnerChanged",
            arg0: BlueZ.service))
        // Unstructured: it follows BlueZ's name for the client's whole life (start() returns at
        // once); stop() cancels it.
        let t2 = Task { [weak self] in
            for await s in ownerSignals {
                guard let self else { return }
                guard s.member == "NameOwnerChanged", s.arguments.count == 3 else { continue }
                let newOwner = s.arguments[2].string ?? ""
                if newOwner.isEmpty {
                    self.logger.warning("org.bluez left the D-Bus: BlueZ (bluetoothd) stopped")
                    self.lost()
                } else {
                    self.logger.notice("org.bluez appeared on the D-Bus (\(newOwner))")
                    await self.reload()
                }
            }
        }
        state.withLock {
            $0.tasks = [t2]
            $0.subscriptions = [sub]
        }
        connection.pollLoop.add(notificationSockets)
        await reload()
    }

    /// Stops listening.
    public func stop() {
        let (tasks, subs) = state.withLock { s -> ([Task<Void, Never>], [DBusConnection.SignalSubscription]) in
            let t = (s.tasks, s.subscriptions)
            s.tasks = []
            s.subscriptions = []
            return t
        }
        for t in tasks { t.cancel() }
        for sub in subs { sub.cancel() }
        connection.pollLoop.remove(notificationSockets)
        notificationSockets.releaseAll()
        eventContinuation.finish()
    }

    private func lost() {
        notificationSockets.releaseAll()
        state.withLock { s in
            s.tree = BlueZObjectTree()
            s.reportBasis = [:]
            s.available = false
        }
        eventContinuation.yield(.serviceLost)
    }

    /// Loads the tree from `GetManagedObjects`.
    @discardableResult
    public func reload() async -> Bool {
        do {
            let reply = try await connection.call(
                destination: BlueZ.service, path: "/", interface: "org.freedesktop.DBus.ObjectManager",
                method: "GetManagedObjects", timeout: callTimeout)
            guard let objects = reply.first else { return false }
            state.withLock { s in
                s.tree.load(managedObjects: objects)
                s.reportBasis = [:]
                s.available = true
            }
            eventContinuation.yield(.serviceAvailable)
            return true
        } catch {
            let bluez = BlueZError(error)
            if bluez.code == .serviceUnavailable {
                logger.debug("org.bluez is not on the bus yet")
            } else if bluez.code == .accessDenied {
                // Not BlueZ missing: the bus's policy for org.bluez (bluez's /etc/dbus-1/system.d/bluetooth.conf).
                logger.error(
                    "the D-Bus system bus denies this process access to org.bluez (\(bluez.message)): BlueZ's D-Bus policy (/etc/dbus-1/system.d/bluetooth.conf) must allow the user the bridge runs as, usually through the 'bluetooth' group (the packaged unit has SupplementaryGroups=bluetooth); retrying when org.bluez restarts")
            } else {
                logger.warning("GetManagedObjects failed: \(error)")
            }
            return false
        }
    }

    private func handle(_ s: DBusSignal) {
        switch (s.interface, s.member) {
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard s.arguments.count >= 2, let iface = s.arguments[0].string else { return }
            let invalidated = s.arguments.count > 2 ? (s.arguments[2].strings ?? []) : []
            // Fast path: a characteristic value.
            if iface == BlueZ.gattCharacteristic, let entries = s.arguments[1].dictEntries {
                for e in entries where e.key.string == "Value" {
                    if let bytes = e.value.bytes {
                        let handler = state.withLock { $0.valueHandler }
                        handler?(s.path, bytes)
                    }
                    if entries.count == 1 && invalidated.isEmpty { return }
                }
            }
            let (names, advertisement, handler) = state.withLock {
                st -> ([String], BlueZAdvertisement?, BlueZAdvertisementHandler?) in
                st.tree.propertiesChanged(path: s.path, interface: iface, changed: s.arguments[1], invalidated: invalidated)
                if iface == BlueZ.device { st.reportBasis[s.path] = nil }
                let names = (s.arguments[1].dictEntries ?? []).compactMap { $0.key.string } + invalidated
                guard iface == BlueZ.device, let handler = st.advertisementHandler else { return (names, nil, nil) }
                let data = names.contains("ServiceData") || names.contains("ManufacturerData")
                // Only what an advertisement needs (not a whole BlueZDevice: UUIDs, names, ...).
                guard data || names.contains("RSSI"),
                      let p = st.tree.properties(path: s.path, interface: BlueZ.device),
                      let basis = ReportBasis(p)
                else { return (names, nil, nil) }
                return (names, BlueZAdvertisement(path: s.path, basis, rssi: p["RSSI"]?.int, dataChanged: data), handler)
            }
            // Advertisements take the values' path: decoded and published from here.
            if let advertisement, let handler, handler(advertisement),
               names.allSatisfy({ $0 == "RSSI" || $0 == "ServiceData" || $0 == "ManufacturerData" })
            {
                return
            }
            eventContinuation.yield(.propertiesChanged(path: s.path, interface: iface, changed: names))
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard s.arguments.count == 2, let path = s.arguments[0].string else { return }
            let (added, first, handler) = state.withLock {
                st -> ([String], BlueZAdvertisement?, BlueZAdvertisementHandler?) in
                let added = st.tree.interfacesAdded(path: path, interfaces: s.arguments[1])
                st.reportBasis[path] = nil
                // A device object BlueZ creates for an advertiser carries that first advertisement.
                guard added.contains(BlueZ.device), let handler = st.advertisementHandler,
                      let p = st.tree.properties(path: path, interface: BlueZ.device), p["RSSI"] != nil,
                      let basis = ReportBasis(p)
                else { return (added, nil, nil) }
                return (added, BlueZAdvertisement(path: path, basis, rssi: p["RSSI"]?.int, dataChanged: true), handler)
            }
            if let first, let handler { _ = handler(first) }
            eventContinuation.yield(.interfacesAdded(path: path, interfaces: added))
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard s.arguments.count == 2, let path = s.arguments[0].string, let names = s.arguments[1].strings else {
                return
            }
            state.withLock { st in
                st.tree.interfacesRemoved(path: path, interfaces: names)
                st.reportBasis[path] = nil
            }
            eventContinuation.yield(.interfacesRemoved(path: path, interfaces: names))
        default:
            logger.debug("ignored signal \(s.interface).\(s.member) from \(s.path)")
        }
    }

    // MARK: Calls

    func call(
        _ path: String, _ interface: String, _ method: String, _ args: [DBusValue] = [], timeout: Duration? = nil
    ) async throws(BlueZError) -> [DBusValue] {
        do {
            return try await connection.call(
                destination: BlueZ.service, path: path, interface: interface, method: method, arguments: args,
                timeout: timeout ?? callTimeout)
        } catch {
            throw BlueZError(error)
        }
    }

    /// Sets a property.
    public func setProperty(_ path: String, interface: String, name: String, value: DBusValue) async throws(BlueZError) {
        _ = try await call(path, "org.freedesktop.DBus.Properties", "Set", [.string(interface), .string(name), .variant(value)])
    }

    /// `Adapter1.Powered` (set through `org.freedesktop.DBus.Properties.Set`).
    public func setPowered(adapter: String, _ on: Bool) async throws(BlueZError) {
        try await setProperty(adapter, interface: BlueZ.adapter, name: "Powered", value: .bool(on))
    }

    /// `Adapter1.SetDiscoveryFilter` with service UUIDs and LE transport.
    public func setDiscoveryFilter(adapter: String, uuids: [String], duplicateData: Bool = false) async throws(BlueZError) {
        var filter: [String: DBusValue] = ["Transport": .string("le"), "DuplicateData": .bool(duplicateData)]
        if !uuids.isEmpty { filter["UUIDs"] = .stringArray(uuids) }
        _ = try await call(adapter, BlueZ.adapter, "SetDiscoveryFilter", [.stringVariantDict(filter)])
    }

    /// `Adapter1.StartDiscovery`.
    public func startDiscovery(adapter: String) async throws(BlueZError) {
        _ = try await call(adapter, BlueZ.adapter, "StartDiscovery")
    }

    /// `Adapter1.StopDiscovery`.
    public func stopDiscovery(adapter: String) async throws(BlueZError) {
        _ = try await call(adapter, BlueZ.adapter, "StopDiscovery")
    }

    /// `Adapter1.RemoveDevice`.
    public func removeDevice(adapter: String, device: String) async throws(BlueZError) {
        _ = try await call(adapter, BlueZ.adapter, "RemoveDevice", [.objectPath(device)])
    }

    /// `Adapter1.ConnectDevice` (experimental in BlueZ): returns the device path.
    public func connectDevice(adapter: String, address: String, addressType: String) async throws(BlueZError) -> String {
        let r = try await call(adapter, BlueZ.adapter, "ConnectDevice", [
            .stringVariantDict(["Address": .string(address), "AddressType": .string(addressType)]),
        ])
        return r.first?.string ?? ""
    }

    /// `Device1.Connect`.
    public func connect(device: String, timeout: Duration = .seconds(30)) async throws(BlueZError) {
        _ = try await call(device, BlueZ.device, "Connect", timeout: timeout)
    }

    /// `Device1.Disconnect`.
    public func disconnect(device: String) async throws(BlueZError) {
        _ = try await call(device, BlueZ.device, "Disconnect")
    }

    /// `GattCharacteristic1.StartNotify`.
    public func startNotify(characteristic: String) async throws(BlueZError) {
        _ = try await call(characteristic, BlueZ.gattCharacteristic, "StartNotify")
    }

    /// `GattCharacteristic1.AcquireNotify`: BlueZ hands over a socket on which each notification
    /// arrives as one packet; its values go to the value handler like those of signals, without
    /// dbus-daemon. Returns the ATT MTU. BlueZ refuses for characteristics that only indicate
    /// (`NotSupported`) and for one already notifying for a client (`NotPermitted`,
    /// `InProgress`): ``startNotify(characteristic:)`` is the fallback. A hang-up of the socket
    /// comes as ``BlueZEvent/notificationsReleased(characteristic:)``.
    @discardableResult
    public func acquireNotify(characteristic: String) async throws(BlueZError) -> Int {
        let r = try await call(characteristic, BlueZ.gattCharacteristic, "AcquireNotify", [.stringVariantDict([:])])
        guard r.count == 2, case .unixFD(let fd) = r[0], fd >= 0 else {
            for case .unixFD(let fd) in r where fd >= 0 { close(fd) }
            throw BlueZError(code: .failed, name: "org.bluez.Error.Failed", message: "AcquireNotify returned no socket")
        }
        notificationSockets.add(fd: fd, path: characteristic)
        return r[1].int ?? 23
    }

    /// Ends notifications acquired with ``acquireNotify(characteristic:)`` by closing the socket
    /// (BlueZ sees the hang-up); returns whether there was one.
    @discardableResult
    public func releaseNotify(characteristic: String) -> Bool {
        notificationSockets.release(path: characteristic)
    }

    /// `GattCharacteristic1.StopNotify`.
    public func stopNotify(characteristic: String) async throws(BlueZError) {
        _ = try await call(characteristic, BlueZ.gattCharacteristic, "StopNotify")
    }

    /// `GattCharacteristic1.ReadValue`.
    public func readValue(characteristic: String, timeout: Duration? = nil) async throws(BlueZError) -> [UInt8] {
        let r = try await call(characteristic, BlueZ.gattCharacteristic, "ReadValue", [.stringVariantDict([:])], timeout: timeout)
        return r.first?.bytes ?? []
    }

    /// `GattDescriptor1.ReadValue`.
    public func readDescriptor(_ descriptor: String, timeout: Duration? = nil) async throws(BlueZError) -> [UInt8] {
        let r = try await call(descriptor, BlueZ.gattDescriptor, "ReadValue", [.stringVariantDict([:])], timeout: timeout)
        return r.first?.bytes ?? []
    }

    /// `GattCharacteristic1.WriteValue` with an explicit type.
    public func writeValue(
        characteristic: String, value: [UInt8], type: GattWriteType, timeout: Duration? = nil
    ) async throws(BlueZError) {
        _ = try await call(
            characteristic, BlueZ.gattCharacteristic, "WriteValue",
            [.bytes(value), .stringVariantDict(["type": .string(type.rawValue)])], timeout: timeout)
    }
}
