import BridgeBase
import DBusKit

/// Fault injection at run time (exposed on the bus by ``SimulatorControl``). Each method models what
/// BlueZ 5.66 shows a client when the fault happens on a real system; see scripts/sim/README.md.
extension Simulator {
    // MARK: - Devices

    /// Moves the peripheral with `address` into or out of radio range. Out of range it stops
    /// advertising, connection attempts fail, and an existing link drops (supervision timeout:
    /// `Connected` and `ServicesResolved` false in one signal). Back in range it advertises again.
    /// `adapter`: only as that adapter hears it (the peripheral moved away from one radio; the
    /// others still hear it), nil: every adapter.
    public func setInRange(address: String, adapter: String? = nil, _ inRange: Bool) throws(DBusError) {
        var found = try peripherals(address)
        if let adapter {
            let path = try adaptersNamed(adapter)[0].path
            found = found.filter { $0.adapterPath == path }
            guard !found.isEmpty else {
                throw DBusError(SimulatorControl.ErrorName.unknownDevice, "\(adapter) does not hear \(address) in the scenario")
            }
        }
        for d in found {
            d.inRange = inRange
            if !inRange && d.connection != .disconnected {
                linkLost(d)
            }
        }
    }

    /// Drops the link to the peripheral with `address` now, as a link loss.
    public func dropConnection(address: String) throws(DBusError) {
        for d in try peripherals(address) where d.connection != .disconnected {
            linkLost(d)
        }
    }

    /// The peripheral with `address` forgets its bond with this host (reset, battery change): the
    /// host keeps its half (`Paired` stays true), so the next connection's encryption fails with
    /// PIN or Key Missing and the link drops; `Connect` fails with `Failed
    /// "le-connection-abort-by-local"` until the host removes the device and pairs again. A
    /// current link drops now (the peripheral resets).
    public func forgetBond(address: String) throws(DBusError) {
        for d in try peripherals(address) where d.paired {
            d.peripheralForgotBond = true
            if d.connection != .disconnected { linkLost(d) }
        }
        logger.info("the peripheral forgot its bond (injected)", metadata: ["address": "\(address)"])
    }

    /// Drops every link of this simulator at once, as a link loss (the host going away): the
    /// peripherals are free for other adapters and simulators.
    public func dropAllConnections() {
        for path in deviceOrder {
            guard let d = devices[path], d.connection != .disconnected else { continue }
            linkLost(d)
        }
        logger.info("every link dropped (injected)")
    }

    /// Sets the mean RSSI at which `adapter` (nil: every adapter that hears it) hears the peripheral
    /// with `address`. The next advertisements report it (the walk restarts there), and so does the
    /// `RSSI` property with them; 127 means "not available". An adapter that does not hear the
    /// peripheral in the scenario does not start hearing it.
    public func setRSSI(address: String, adapter: String?, _ rssi: Int16) throws(DBusError) {
        guard (-127...127).contains(rssi) else {
            throw DBusError(SimulatorControl.ErrorName.invalidArguments, "RSSI \(rssi) is not in -127...127")
        }
        var found = try peripherals(address)
        if let adapter, !adapter.isEmpty {
            let path = try adaptersNamed(adapter)[0].path
            found = found.filter { $0.adapterPath == path }
            guard !found.isEmpty else {
                throw DBusError(SimulatorControl.ErrorName.unknownDevice, "\(adapter) does not hear \(address) in the scenario")
            }
        }
        for d in found {
            d.meanRSSI = rssi
            d.rssi = rssi
            logger.info("RSSI set", metadata: ["address": "\(d.spec.address)", "adapter": "\(d.adapterName)", "rssi": "\(rssi)"])
        }
    }

    /// Makes the next `count` connection attempts to `address` fail with `error` (count 0 disarms).
    /// - Parameters:
    ///   - linkUp: `Connected` flips true, then false after the error reply (default: for
    ///     "le-connection-abort-by-*").
    ///   - delay: from the call until the failure (default: the connect delay for `org.bluez.Error.Failed`,
    ///     at once for other errors).
    ///   - downAfter: with `linkUp`, from the error reply until `Connected` is false (default 100 ms).
    public func failNextConnect(address: String, error: DBusError, count: UInt32, linkUp: Bool? = nil,
                                delay: Duration? = nil, downAfter: Duration? = nil) throws(DBusError) {
        for d in try peripherals(address) {
            d.connectFault = count == 0 ? nil : ConnectFault(
                error: error, count: count, linkUp: linkUp, delay: delay, downAfter: downAfter ?? .milliseconds(100))
        }
    }

    /// Sets how services resolve on the next connections of `address` (see ``ResolveBehaviour``).
    public func setResolveBehaviour(address: String, _ behaviour: ResolveBehaviour) throws(DBusError) {
        for d in try peripherals(address) {
            d.resolveBehaviour = behaviour
            if case .resolvedBeforeGatt = behaviour, d.connection == .disconnected, d.gattExported {
                removeGatt(d)
            }
        }
    }

    /// Removes the device object of `address` (and its GATT objects) as bluetoothd does when it
    /// forgets a device: `InterfacesRemoved` while a client still knows it; a link is dropped first.
    /// The peripheral stays: discovery or `ConnectDevice` finds it again.
    public func removeDeviceObject(address: String) throws(DBusError) {
        for d in try peripherals(address) where d.exported {
            if d.connection != .disconnected { linkLost(d) }
            unexportDevice(d)
            logger.info("device object removed (injected)", metadata: ["address": "\(d.spec.address)"])
        }
    }

    // MARK: - Adapters

    /// The next `StartDiscovery` (any adapter, any client) fails with `error`; nil disarms.
    public func failNextStartDiscovery(_ error: DBusError?) {
        startDiscoveryFault = error
    }

    /// The running discovery of the adapter(s) stops reporting advertisements (`Discovering` stays
    /// true) until it is restarted; when not discovering, the next discovery starts stalled.
    /// `adapter` nil: every adapter.
    public func stallDiscovery(adapter: String? = nil) throws(DBusError) {
        for a in try adaptersNamed(adapter) {
            if a.discovering {
                a.stalledGeneration = a.discoveryGeneration
            } else {
                a.stallNextDiscovery = true
            }
            logger.info("discovery stalled (injected)", metadata: ["adapter": "\(a.path)"])
        }
    }

    /// Powers the adapter(s) off or on like a power cycle: off ends discovery and drops every link.
    /// `adapter` nil: every adapter.
    public func setPowered(_ on: Bool, adapter: String? = nil) throws(DBusError) {
        for a in try adaptersNamed(adapter) where a.present && a.powered != on {
            server.setProperties(path: a.path, interface: BlueZNames.adapter, ["Powered": .bool(on)])
            applyPowered(adapter: a.path, on)
        }
    }

    /// Removes the adapter(s) as when the controller is unplugged: links end, device objects and
    /// then the adapter object are removed (`InterfacesRemoved`). `adapter` nil: every adapter.
    public func removeAdapter(named adapter: String? = nil) throws(DBusError) {
        for a in try adaptersNamed(adapter) where a.present {
            a.discoveryClients.removeAll()
            a.filters.removeAll()
            a.discoveryGeneration &+= 1
            a.discovering = false
            for d in devices(of: a) {
                if d.connection != .disconnected { linkLost(d, signal: false) }
                guard d.exported else { continue }
                if d.temporary {
                    unexportDevice(d)
                } else {
                    hideDevice(d)
                }
            }
            server.removeSubtree(path: a.path)
            a.present = false
            logger.info("adapter removed (injected)", metadata: ["adapter": "\(a.path)"])
        }
    }

    /// Adds the adapter(s) back as when the controller is plugged in again: the adapter object with
    /// its scenario power state, then its known devices (not connected). `adapter` nil: every adapter.
    public func addAdapter(named adapter: String? = nil) throws(DBusError) {
        for a in try adaptersNamed(adapter) where !a.present {
            a.present = true
            a.powered = a.spec.powered
            a.stalledGeneration = nil
            a.stallNextDiscovery = false
            server.addInterfaces(path: a.path, adapterInterfaces(a))
            for d in devices(of: a) where !d.temporary && !d.exported {
                exportDevice(d)
            }
            logger.info("adapter added (injected)", metadata: ["adapter": "\(a.path)"])
        }
    }

    /// Removes a known device's objects but keeps what bluetoothd stores about it (known, paired).
    func hideDevice(_ d: SimulatedDevice) {
        dropNotifications(d)
        server.removeSubtree(path: d.path)
        d.exported = false
        d.gattExported = false
        d.gattEpoch &+= 1
        d.batteryExported = false
        d.servicesResolved = false
        d.hasRSSIProperty = false
        d.lastSeen = nil
    }

    // MARK: - Characteristics

    /// Overrides the error of `operation` on the characteristics with `uuid` of `address`; nil
    /// removes the override (the scenario's behaviour applies again).
    public func setCharacteristicError(address: String, uuid: String, operation: GattOperation,
                                       error: GattErrorSpec?) throws(DBusError) {
        for c in try characteristics(address: address, uuid: uuid) {
            c.updateFaults { $0.overrides[operation] = error }
        }
    }

    /// Sets the delay of `operation` on the characteristics with `uuid` of `address` (nil or zero: none).
    public func setCharacteristicDelay(address: String, uuid: String, operation: GattOperation,
                                       delay: Duration?) throws(DBusError) {
        for c in try characteristics(address: address, uuid: uuid) {
            c.updateFaults { $0.setDelay(operation, delay) }
        }
    }

    // MARK: - Lookup

    /// The devices (one per adapter that sees it) of the peripheral with `address`.
    func peripherals(_ address: String) throws(DBusError) -> [SimulatedDevice] {
        let found = devicesWith(address: address)
        guard !found.isEmpty else {
            throw DBusError(SimulatorControl.ErrorName.unknownDevice, "No peripheral \(address) in the scenario")
        }
        return found
    }

    func characteristics(address: String, uuid: String) throws(DBusError) -> [SimCharacteristic] {
        guard let u = BluetoothUUID.normalize(uuid) else {
            throw DBusError(SimulatorControl.ErrorName.invalidArguments, "Not a UUID: \(uuid)")
        }
        let found = try peripherals(address).flatMap { $0.gatt.characteristics.filter { $0.uuid == u } }
        guard !found.isEmpty else {
            throw DBusError(SimulatorControl.ErrorName.unknownCharacteristic, "\(address) has no characteristic \(u)")
        }
        return found
    }

    func adaptersNamed(_ name: String?) throws(DBusError) -> [SimulatedAdapter] {
        guard let name, !name.isEmpty else { return adapterOrder.compactMap { adapters[$0] } }
        let path = name.hasPrefix("/") ? name : BlueZNames.adapterPath(name)
        guard let a = adapters[path] else {
            throw DBusError(SimulatorControl.ErrorName.unknownAdapter, "No adapter \(name) in the scenario")
        }
        return [a]
    }
}
