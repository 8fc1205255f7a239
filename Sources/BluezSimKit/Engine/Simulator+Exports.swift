import BridgeBase
import DBusKit

/// The D-Bus interfaces of every object, with properties named and typed as BlueZ 5.66 exports them.
extension Simulator {
    // MARK: - /org/bluez

    func rootInterfaces() -> [DBusInterfaceExport] {
        [
            DBusInterfaceExport(name: BlueZNames.agentManager, methods: [
                "RegisterAgent": DBusMethod(in: "os") { [weak self] inv in
                    try await self?.registerAgent(sender: inv.sender, path: inv.arguments[0].string ?? "",
                                                  capability: inv.arguments[1].string ?? "")
                    return []
                },
                "UnregisterAgent": DBusMethod(in: "o") { [weak self] inv in
                    try await self?.unregisterAgent(sender: inv.sender, path: inv.arguments[0].string ?? "")
                    return []
                },
                "RequestDefaultAgent": DBusMethod(in: "o") { [weak self] inv in
                    try await self?.requestDefaultAgent(sender: inv.sender, path: inv.arguments[0].string ?? "")
                    return []
                },
            ]),
            DBusInterfaceExport(name: BlueZNames.profileManager, methods: [
                "RegisterProfile": DBusMethod(in: "osa{sv}") { _ in [] },
                "UnregisterProfile": DBusMethod(in: "o") { _ in [] },
            ]),
        ]
    }

    // MARK: - Adapter

    func adapterInterfaces(_ a: SimulatedAdapter) -> [DBusInterfaceExport] {
        var methods: [String: DBusMethod] = [
            "StartDiscovery": DBusMethod { [weak self] inv in
                try await self?.startDiscovery(adapter: inv.path, sender: inv.sender)
                return []
            },
            "StopDiscovery": DBusMethod { [weak self] inv in
                try await self?.stopDiscovery(adapter: inv.path, sender: inv.sender)
                return []
            },
            "SetDiscoveryFilter": DBusMethod(in: "a{sv}") { [weak self] inv in
                try await self?.setDiscoveryFilter(adapter: inv.path, sender: inv.sender,
                                                   filter: inv.arguments[0].stringDict ?? [:])
                return []
            },
            "GetDiscoveryFilters": DBusMethod(out: "as") { _ in
                [.stringArray(DiscoveryFilter.supportedKeys)]
            },
            "RemoveDevice": DBusMethod(in: "o") { [weak self] inv in
                try await self?.removeDevice(adapter: inv.path, device: inv.arguments[0].string ?? "")
                return []
            },
        ]
        if options.connectDevice {
            methods["ConnectDevice"] = DBusMethod(in: "a{sv}", out: "o") { [weak self] inv in
                guard let self else { return [] }
                let path = try await self.connectDevice(adapter: inv.path, properties: inv.arguments[0].stringDict ?? [:])
                return [.objectPath(path)]
            }
        }
        let properties: [String: DBusValue] = [
            "Address": .string(a.spec.address),
            "AddressType": .string("public"),
            "Name": .string(a.spec.systemName),
            "Alias": .string(a.spec.alias),
            "Class": .uint32(a.spec.deviceClass),
            "Powered": .bool(a.powered),
            "Discoverable": .bool(a.spec.discoverable),
            "DiscoverableTimeout": .uint32(180),
            "Pairable": .bool(a.spec.pairable),
            "PairableTimeout": .uint32(0),
            "Discovering": .bool(false),
            "UUIDs": .stringArray(["1801", "1800", "180a"].map { BluetoothUUID.normalize($0)! }),
            "Modalias": .string("usb:v1D6Bp0246d0542"),
            "Roles": .stringArray(["central", "peripheral"]),
        ]
        // bluetoothd 5.66 offers passive scanning only with --experimental.
        let monitors = options.connectDevice ? [monitorManagerInterface(a)] : []
        return monitors + [
            DBusInterfaceExport(name: BlueZNames.adapter, properties: properties, methods: methods,
                                setProperty: { [weak self] path, name, value throws(DBusError) in
                                    try Self.checkAdapterProperty(name: name, value: value)
                                    if name == "Powered", let on = value.bool {
                                        Task { await self?.applyPowered(adapter: path, on) }
                                    }
                                }),
        ]
    }

    static func checkAdapterProperty(name: String, value: DBusValue) throws(DBusError) {
        let v = value.unwrapped
        switch name {
        case "Powered", "Discoverable", "Pairable":
            guard case .bool = v else { throw invalidPropertyType(v) }
        case "Alias":
            guard case .string = v else { throw invalidPropertyType(v) }
        case "DiscoverableTimeout", "PairableTimeout":
            guard case .uint32 = v else { throw invalidPropertyType(v) }
        default:
            throw DBusError(DBusError.Name.propertyReadOnly, "Property '\(name)' is not writable")
        }
    }

    static func invalidPropertyType(_ v: DBusValue) -> DBusError {
        DBusError(DBusError.Name.invalidArgs, "Invalid argument type: '\(v.signature)'")
    }

    // MARK: - Device

    /// `ServiceData` as BlueZ has it: `a{sv}`, UUID → `ay`.
    static func serviceDataValue(_ data: [String: [UInt8]]) -> DBusValue {
        .dictionary(key: "s", value: "v", data.keys.sorted().map { DBusDictEntry(.string($0), .variant(.bytes(data[$0]!))) })
    }

    /// `ManufacturerData` as BlueZ has it: `a{qv}`, company id → `ay`.
    static func manufacturerDataValue(_ data: [UInt16: [UInt8]]) -> DBusValue {
        .dictionary(key: "q", value: "v", data.keys.sorted().map { DBusDictEntry(.uint16($0), .variant(.bytes(data[$0]!))) })
    }

    func deviceProperties(_ d: SimulatedDevice, rssi: Int16?) -> [String: DBusValue] {
        let s = d.spec
        var p: [String: DBusValue] = [
            "Address": .string(s.address),
            "AddressType": .string(s.addressType),
            "Alias": .string(d.alias),
            "Paired": .bool(d.paired),
            "Bonded": .bool(d.paired),
            "Trusted": .bool(s.trusted),
            "Blocked": .bool(false),
            "LegacyPairing": .bool(false),
            "Connected": .bool(d.connection == .connected || d.connection == .disconnecting),
            "UUIDs": .stringArray(d.uuids),
            "Adapter": .objectPath(d.adapterPath),
            "ServicesResolved": .bool(d.servicesResolved),
        ]
        if let name = d.currentName { p["Name"] = .string(name) }
        if let appearance = s.appearance { p["Appearance"] = .uint16(appearance) }
        if let rssi {
            p["RSSI"] = .int16(rssi)
            if let tx = s.txPower { p["TxPower"] = .int16(tx) }
        }
        if !d.manufacturerData.isEmpty { p["ManufacturerData"] = Self.manufacturerDataValue(d.manufacturerData) }
        if !d.serviceData.isEmpty { p["ServiceData"] = Self.serviceDataValue(d.serviceData) }
        if !s.advertisingFlags.isEmpty { p["AdvertisingFlags"] = .bytes(s.advertisingFlags) }
        return p
    }

    func deviceInterface(_ d: SimulatedDevice, rssi: Int16?) -> DBusInterfaceExport {
        DBusInterfaceExport(name: BlueZNames.device, properties: deviceProperties(d, rssi: rssi), methods: [
            "Connect": DBusMethod { [weak self] inv in
                try await self?.connect(device: inv.path)
                return []
            },
            "Disconnect": DBusMethod { [weak self] inv in
                await self?.disconnect(device: inv.path)
                return []
            },
            "ConnectProfile": DBusMethod(in: "s") { _ in throw BluezError.notSupported },
            "DisconnectProfile": DBusMethod(in: "s") { _ in throw BluezError.notSupported },
            "Pair": DBusMethod { [weak self] inv in
                try await self?.pair(device: inv.path, sender: inv.sender)
                return []
            },
            "CancelPairing": DBusMethod { [weak self] inv in
                try await self?.cancelPairing(device: inv.path)
                return []
            },
        ], setProperty: { path, name, value throws(DBusError) in
            let v = value.unwrapped
            switch name {
            case "Alias":
                guard case .string = v else { throw Self.invalidPropertyType(v) }
            case "Trusted", "Blocked", "WakeAllowed":
                guard case .bool = v else { throw Self.invalidPropertyType(v) }
            default:
                throw DBusError(DBusError.Name.propertyReadOnly, "Property '\(name)' is not writable")
            }
        })
    }

    func exportDevice(_ d: SimulatedDevice, rssi: Int16? = nil) {
        d.exported = true
        d.hasRSSIProperty = rssi != nil
        server.addInterfaces(path: d.path, [deviceInterface(d, rssi: rssi)])
        logger.debug("device object added", metadata: ["path": "\(d.path)"])
    }

    // MARK: - GATT

    /// Exports every GATT object of `d` at once.
    func exportGatt(_ d: SimulatedDevice) {
        for (path, interface) in gattObjects(d) { server.addInterfaces(path: path, [interface]) }
        d.gattExported = true
    }

    /// Exports the GATT objects of `d` one `InterfacesAdded` at a time in handle order, spread evenly
    /// over ``ScenarioSettings/gattExportTime`` (the first after one step), as bluetoothd 5.66 does
    /// after `ServicesResolved: true` at a first resolve. Stops when the objects are removed meanwhile.
    func exportGattGradually(_ d: SimulatedDevice) async {
        let objects = gattObjects(d)
        d.gattExported = true
        let epoch = d.gattEpoch
        let step = objects.isEmpty ? Duration.zero : settings.gattExportTime / objects.count
        for (path, interface) in objects {
            await sleep(step)
            guard devices[d.path] === d, d.exported, d.gattEpoch == epoch else { return }
            server.addInterfaces(path: path, [interface])
        }
    }

    /// The GATT objects of `d` in handle order: each service, its characteristics and descriptors.
    func gattObjects(_ d: SimulatedDevice) -> [(String, DBusInterfaceExport)] {
        let mtu = d.spec.mtu ?? settings.mtu
        var out: [(String, DBusInterfaceExport)] = []
        for s in d.gatt.services {
            out.append((s.path, DBusInterfaceExport(name: BlueZNames.gattService, properties: [
                "UUID": .string(s.uuid),
                "Device": .objectPath(d.path),
                "Primary": .bool(s.primary),
                "Includes": .objectPathArray([]),
            ])))
            for c in s.characteristics {
                out.append((c.path, characteristicInterface(c, mtu: mtu)))
                for desc in c.descriptors {
                    out.append((desc.path, descriptorInterface(desc, characteristic: c)))
                }
            }
        }
        return out
    }

    func characteristicInterface(_ c: SimCharacteristic, mtu: UInt16) -> DBusInterfaceExport {
        var p: [String: DBusValue] = [
            "UUID": .string(c.uuid),
            "Service": .objectPath(c.servicePath),
            "Value": .bytes([]),
            "Flags": .stringArray(c.clientFlags),
            "MTU": .uint16(mtu),
        ]
        if c.canNotify { p["Notifying"] = .bool(c.isActive) }
        if c.clientFlags.contains("notify") { p["NotifyAcquired"] = .bool(false) }
        if c.clientFlags.contains("write-without-response") { p["WriteAcquired"] = .bool(false) }
        return DBusInterfaceExport(name: BlueZNames.gattCharacteristic, properties: p, methods: [
            "ReadValue": DBusMethod(in: "a{sv}", out: "ay") { [weak self] inv in
                guard let self else { return [] }
                let v = try await self.readValue(characteristic: inv.path, options: inv.arguments[0].stringDict ?? [:])
                return [.bytes(v)]
            },
            "WriteValue": DBusMethod(in: "aya{sv}") { [weak self] inv in
                try await self?.writeValue(characteristic: inv.path, value: inv.arguments[0].bytes ?? [],
                                           options: inv.arguments[1].stringDict ?? [:])
                return []
            },
            "StartNotify": DBusMethod { [weak self] inv in
                try await self?.startNotify(characteristic: inv.path, sender: inv.sender)
                return []
            },
            "StopNotify": DBusMethod { [weak self] inv in
                try await self?.stopNotify(characteristic: inv.path, sender: inv.sender)
                return []
            },
            "AcquireWrite": DBusMethod(in: "a{sv}", out: "hq") { [weak self] inv in
                try await self?.acquireWrite(characteristic: inv.path)
                return []
            },
            "AcquireNotify": DBusMethod(in: "a{sv}", out: "hq", afterReply: { [weak self] values in
                Simulator.closePassedDescriptor(values)
                Task { await self?.announceAcquisition(characteristic: c.path) }
            }) { [weak self] inv in
                guard let self else { throw BluezError.failed("Not connected") }
                let (fd, mtu) = try await self.acquireNotify(characteristic: inv.path, sender: inv.sender)
                return [.unixFD(fd), .uint16(mtu)]
            },
        ])
    }

    func descriptorInterface(_ desc: SimDescriptor, characteristic c: SimCharacteristic) -> DBusInterfaceExport {
        DBusInterfaceExport(name: BlueZNames.gattDescriptor, properties: [
            "UUID": .string(desc.uuid),
            "Characteristic": .objectPath(c.path),
            "Value": .bytes([]),
        ], methods: [
            "ReadValue": DBusMethod(in: "a{sv}", out: "ay") { [weak self] inv in
                guard let self else { return [] }
                let v = try await self.readDescriptor(path: inv.path, options: inv.arguments[0].stringDict ?? [:])
                return [.bytes(v)]
            },
            "WriteValue": DBusMethod(in: "aya{sv}") { [weak self] inv in
                try await self?.writeDescriptor(path: inv.path, value: inv.arguments[0].bytes ?? [],
                                                options: inv.arguments[1].stringDict ?? [:])
                return []
            },
        ])
    }
}
