import DBusKit

/// BlueZ's object tree as `GetManagedObjects`, `InterfacesAdded`, `InterfacesRemoved` and
/// `PropertiesChanged` describe it: path → interface → property → value. A pure value.
public struct BlueZObjectTree: Sendable {
    /// Properties by interface, by object path.
    public private(set) var objects: [String: [String: [String: DBusValue]]] = [:]
    /// The paths of the objects that have `Adapter1` (a handful), kept beside ``objects``: listing
    /// the adapters, which the supervisor does for every event it reads the tree for, then does
    /// not walk every device and GATT object.
    public private(set) var adapterPaths: Set<String> = []

    /// An empty tree.
    public init() {}

    /// Replaces the whole tree with a `GetManagedObjects` reply (`a{oa{sa{sv}}}`).
    public mutating func load(managedObjects value: DBusValue) {
        objects = [:]
        guard let entries = value.dictEntries else { return }
        for e in entries {
            guard let path = e.key.string, let ifaces = e.value.dictEntries else { continue }
            var obj = [String: [String: DBusValue]]()
            for i in ifaces {
                guard let name = i.key.string else { continue }
                obj[name] = Self.properties(i.value)
            }
            objects[path] = obj
        }
        adapterPaths = Set(objects.compactMap { $0.value[BlueZ.adapter] != nil ? $0.key : nil })
    }

    static func properties(_ value: DBusValue) -> [String: DBusValue] {
        var out = [String: DBusValue]()
        for e in value.dictEntries ?? [] {
            if let k = e.key.string { out[k] = e.value.unwrapped }
        }
        return out
    }

    /// Applies `InterfacesAdded(o, a{sa{sv}})`; returns the interface names added.
    @discardableResult
    public mutating func interfacesAdded(path: String, interfaces: DBusValue) -> [String] {
        var added = [String]()
        for i in interfaces.dictEntries ?? [] {
            guard let name = i.key.string else { continue }
            objects[path, default: [:]][name] = Self.properties(i.value)
            if name == BlueZ.adapter { adapterPaths.insert(path) }
            added.append(name)
        }
        return added
    }

    /// Applies `InterfacesRemoved(o, as)`.
    public mutating func interfacesRemoved(path: String, interfaces: [String]) {
        for i in interfaces { objects[path]?[i] = nil }
        if objects[path]?.isEmpty == true { objects[path] = nil }
        if objects[path]?[BlueZ.adapter] == nil { adapterPaths.remove(path) }
    }

    /// Applies `PropertiesChanged(s, a{sv}, as)` to an object that exists.
    public mutating func propertiesChanged(path: String, interface: String, changed: DBusValue, invalidated: [String]) {
        guard objects[path]?[interface] != nil else { return }
        for e in changed.dictEntries ?? [] {
            if let k = e.key.string { objects[path]![interface]![k] = e.value.unwrapped }
        }
        for k in invalidated { objects[path]![interface]![k] = nil }
    }

    /// Applies an advertisement report (`PropertiesChanged` of `Device1`'s `RSSI`,
    /// `ServiceData`, `ManufacturerData`) in place, with one lookup of the object; returns the
    /// device's properties afterwards, nil (and nothing changed) when there is no such device.
    public mutating func applyAdvertisement(
        path: String, rssi: Int16?, serviceData: DBusValue?, manufacturerData: DBusValue?
    ) -> [String: DBusValue]? {
        guard let i = objects.index(forKey: path), objects.values[i][BlueZ.device] != nil else { return nil }
        if let rssi { objects.values[i][BlueZ.device]!["RSSI"] = .int16(rssi) }
        if let serviceData { objects.values[i][BlueZ.device]!["ServiceData"] = serviceData }
        if let manufacturerData { objects.values[i][BlueZ.device]!["ManufacturerData"] = manufacturerData }
        return objects.values[i][BlueZ.device]
    }

    /// The properties of one interface of one object.
    public func properties(path: String, interface: String) -> [String: DBusValue]? {
        objects[path]?[interface]
    }

    /// Paths of objects that have `interface`, optionally below `root`.
    public func paths(with interface: String, below root: String? = nil) -> [String] {
        if interface == BlueZ.adapter && root == nil { return adapterPaths.sorted() }
        let prefix = root.map { $0 + "/" }
        return objects.compactMap { path, ifaces in
            guard ifaces[interface] != nil else { return nil }
            if let prefix, !path.hasPrefix(prefix) { return nil }
            return path
        }.sorted()
    }

    /// A device's snapshot.
    public func device(_ path: String) -> BlueZDevice? {
        properties(path: path, interface: BlueZ.device).flatMap { BlueZDevice(path: path, properties: $0) }
    }

    /// Every device on an adapter.
    public func devices(adapter: String) -> [BlueZDevice] {
        paths(with: BlueZ.device, below: adapter).compactMap(device)
    }

    /// The GATT services of a device.
    public func services(device: String) -> [GattService] {
        paths(with: BlueZ.gattService, below: device).compactMap { p in
            properties(path: p, interface: BlueZ.gattService).flatMap { GattService(path: p, properties: $0) }
        }
    }

    /// The GATT characteristics of a service.
    public func characteristics(service: String) -> [GattCharacteristic] {
        paths(with: BlueZ.gattCharacteristic, below: service).compactMap { p in
            properties(path: p, interface: BlueZ.gattCharacteristic).flatMap { GattCharacteristic(path: p, properties: $0) }
        }
    }

    /// A characteristic's snapshot.
    public func characteristic(_ path: String) -> GattCharacteristic? {
        properties(path: path, interface: BlueZ.gattCharacteristic).flatMap { GattCharacteristic(path: path, properties: $0) }
    }

    /// The GATT descriptors of a characteristic (its `GattDescriptor1` objects below it).
    public func descriptors(characteristic: String) -> [GattDescriptor] {
        paths(with: BlueZ.gattDescriptor, below: characteristic).compactMap { p in
            properties(path: p, interface: BlueZ.gattDescriptor).flatMap { GattDescriptor(path: p, properties: $0) }
        }
    }
}
