import BlueZ
import BridgeBase

/// An adapter object as the runtime reads it (`org.bluez.Adapter1`).
public struct BluetoothAdapterState: Sendable, Equatable {
    /// Its object path (`/org/bluez/hci0`).
    public var path: String
    public var powered: Bool
    public var discovering: Bool
    /// Its Bluetooth address, when BlueZ reports one.
    public var address: String?
    /// The adapter offers `AdvertisementMonitorManager1` (BlueZ with `--experimental`).
    public var offersMonitor: Bool
}

/// A device object with its GATT objects, read at once (what a session's core looks at).
public struct BluetoothDeviceObjects: Sendable, Equatable {
    /// A GATT characteristic with its descriptors.
    public struct Characteristic: Sendable, Equatable {
        public var characteristic: GattCharacteristic
        public var descriptors: [GattDescriptor]
    }

    /// A GATT service with its characteristics.
    public struct Service: Sendable, Equatable {
        public var service: GattService
        public var characteristics: [Characteristic]
    }

    public var device: BlueZDevice
    public var services: [Service]
}

/// A central that mirrors BlueZ's object tree (``BlueZClient``, the tests' fake): it answers the
/// seam's reads from its tree, one consistent snapshot a read, in the seam's own values. The
/// runtime holds `any BluetoothCentral` and never sees the tree.
public protocol ObjectTreeCentral: BluetoothCentral {
    /// Reads the tree (a consistent snapshot).
    func withTree<R>(_ body: (BlueZObjectTree) -> R) -> R
}

extension ObjectTreeCentral {
    public func adapters() -> [BluetoothAdapterState] {
        withTree { t in
            t.paths(with: BlueZ.adapter).compactMap { path in
                guard let props = t.properties(path: path, interface: BlueZ.adapter) else { return nil }
                return BluetoothAdapterState(
                    path: path, powered: props["Powered"]?.bool == true, discovering: props["Discovering"]?.bool == true,
                    address: props["Address"]?.string,
                    offersMonitor: t.properties(path: path, interface: BlueZ.advertisementMonitorManager) != nil)
            }
        }
    }

    public func device(_ path: String) -> BlueZDevice? {
        withTree { $0.device(path) }
    }

    public func devices(adapter: String) -> [BlueZDevice] {
        withTree { $0.devices(adapter: adapter) }
    }

    /// One pass over the tree (a session reads this for every input): the GATT objects below the device, each
    /// under its parent path (BlueZ nests them: `…/dev_X/serviceNNNN/charNNNN/descNNNN`), in path order.
    public func deviceObjects(_ path: String) -> BluetoothDeviceObjects? {
        withTree { t in
            guard let device = t.device(path) else { return nil }
            let prefix = path + "/"
            var services: [GattService] = []
            var characteristics: [Substring: [GattCharacteristic]] = [:]
            var descriptors: [Substring: [GattDescriptor]] = [:]
            for (objectPath, interfaces) in t.objects where objectPath.hasPrefix(prefix) {
                guard let slash = objectPath.lastIndex(of: "/") else { continue }
                let parent = objectPath[..<slash]
                if let p = interfaces[BlueZ.gattService], let service = GattService(path: objectPath, properties: p) {
                    services.append(service)
                } else if let p = interfaces[BlueZ.gattCharacteristic], let c = GattCharacteristic(path: objectPath, properties: p) {
                    characteristics[parent, default: []].append(c)
                } else if let p = interfaces[BlueZ.gattDescriptor], let d = GattDescriptor(path: objectPath, properties: p) {
                    descriptors[parent, default: []].append(d)
                }
            }
            let mapped = services.sorted { $0.path < $1.path }.map { s in
                BluetoothDeviceObjects.Service(
                    service: s,
                    characteristics: (characteristics[Substring(s.path)] ?? []).sorted { $0.path < $1.path }.map { c in
                        BluetoothDeviceObjects.Characteristic(
                            characteristic: c, descriptors: (descriptors[Substring(c.path)] ?? []).sorted { $0.path < $1.path })
                    })
            }
            return BluetoothDeviceObjects(device: device, services: mapped)
        }
    }

    public var objectCount: Int {
        withTree { $0.objects.count }
    }
}
