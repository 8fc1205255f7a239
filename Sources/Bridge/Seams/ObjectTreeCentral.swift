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

    public func deviceObjects(_ path: String) -> BluetoothDeviceObjects? {
        withTree { t in
            guard let device = t.device(path) else { return nil }
            let services = t.services(device: path).map { s in
                BluetoothDeviceObjects.Service(
                    service: s,
                    characteristics: t.characteristics(service: s.path).map { c in
                        BluetoothDeviceObjects.Characteristic(characteristic: c, descriptors: t.descriptors(characteristic: c.path))
                    })
            }
            return BluetoothDeviceObjects(device: device, services: services)
        }
    }

    public var objectCount: Int {
        withTree { $0.objects.count }
    }
}
