import BridgeBase
/// The GATT database of one simulated peripheral, with handles assigned the way a peripheral's
/// attribute table lays them out and paths named the way BlueZ names them.
///
/// Handles 0x0001-0x0007 belong to the GAP service (0x1800), which BlueZ does not export.
/// When `genericAttributeService` is set, the Generic Attribute service (0x1801) of a BlueZ 5.66
/// peripheral follows at 0x0008 with Service Changed (0x2A05, indicate, CCC 0x000b), Client
/// Supported Features (0x2B29, read/write), Database Hash (0x2B2A, read, 16 bytes) and Server
/// Supported Features (0x2B3A, read), so scenario services start at 0x0012, as on the realbluez
/// VM. Each characteristic takes a declaration handle (its path component), a value handle, then
/// one handle per descriptor, the CCC (0x2902) first for notify/indicate characteristics.
public struct GattDatabase: Sendable {
    /// Services in handle order.
    public let services: [SimService]

    /// Every characteristic by object path.
    public let characteristicsByPath: [String: SimCharacteristic]
    /// Every descriptor by object path, with its characteristic.
    public let descriptorsByPath: [String: (SimDescriptor, SimCharacteristic)]

    /// Builds the database of `spec` below `devicePath`.
    public init(spec: PeripheralSpec, devicePath: String, genericAttributeService: Bool, seed: UInt64) {
        var services: [ServiceSpec] = []
        var next: UInt16 = 0x0008
        if genericAttributeService {
            services.append(ServiceSpec(uuid: BluetoothUUID.normalize("1801")!, characteristics: [
                CharacteristicSpec(uuid: BluetoothUUID.normalize("2a05")!, flags: ["indicate"]),
                CharacteristicSpec(uuid: BluetoothUUID.normalize("2b29")!, flags: ["read", "write"], value: [0x00]),
                CharacteristicSpec(uuid: BluetoothUUID.normalize("2b2a")!, flags: ["read"],
                                   value: Self.databaseHash(spec)),
                CharacteristicSpec(uuid: BluetoothUUID.normalize("2b3a")!, flags: ["read"], value: [0x01]),
            ]))
        } else {
            next = 0x000a
        }
        services.append(contentsOf: spec.services)
        let ccc = BluetoothUUID.normalize("2902")!
        var built: [SimService] = []
        for s in services {
            let start = next
            let servicePath = devicePath + "/" + BlueZNames.handleComponent("service", start)
            next &+= 1
            var chars: [SimCharacteristic] = []
            for c in s.characteristics {
                let decl = next
                next &+= 2  // declaration + value
                let charPath = servicePath + "/" + BlueZNames.handleComponent("char", decl)
                var descs: [SimDescriptor] = []
                let clientFlags = SimCharacteristic.clientFlags(c.flags)
                let notifies = clientFlags.contains("notify") || clientFlags.contains("indicate")
                if notifies && !c.descriptors.contains(where: { $0.uuid == ccc }) {
                    descs.append(SimDescriptor(uuid: ccc, handle: next, characteristicPath: charPath,
                                               value: [0, 0], flags: ["read", "write"]))
                    next &+= 1
                }
                for d in c.descriptors {
                    descs.append(SimDescriptor(uuid: d.uuid, handle: next, characteristicPath: charPath,
                                               value: d.value, flags: d.flags))
                    next &+= 1
                }
                let battery = s.uuid == BluetoothUUID.normalize("180f") && c.uuid == BluetoothUUID.normalize("2a19")
                chars.append(SimCharacteristic(spec: c, handle: decl, servicePath: servicePath, address: spec.address,
                                               descriptors: descs, seed: seed, isBatteryLevel: battery))
            }
            built.append(SimService(path: servicePath, uuid: s.uuid, primary: s.primary, handle: start,
                                    characteristics: chars))
        }
        self.services = built
        var byPath: [String: SimCharacteristic] = [:]
        var descByPath: [String: (SimDescriptor, SimCharacteristic)] = [:]
        for s in built {
            for c in s.characteristics {
                byPath[c.path] = c
                for d in c.descriptors { descByPath[d.path] = (d, c) }
            }
        }
        self.characteristicsByPath = byPath
        self.descriptorsByPath = descByPath
    }

    /// A stand-in for the Database Hash (0x2B2A): 16 bytes derived from the scenario's services and
    /// characteristics (FNV-1a), so it changes when the database does.
    static func databaseHash(_ spec: PeripheralSpec) -> [UInt8] {
        var text = ""
        for s in spec.services {
            text += s.uuid + ";"
            for c in s.characteristics { text += c.uuid + ":" + c.flags.joined(separator: ",") + ";" }
        }
        var out: [UInt8] = []
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for round in 0..<2 {
            h ^= UInt64(round)
            for b in text.utf8 {
                h ^= UInt64(b)
                h = h &* 0x0000_0100_0000_01b3
            }
            for i in 0..<8 { out.append(UInt8(truncatingIfNeeded: h >> (8 * UInt64(i)))) }
        }
        return out
    }

    /// `Device1.Modalias` from a PnP ID characteristic (2A50: source, vendor, product, version;
    /// source 1 = Bluetooth SIG, 2 = USB), as bluetoothd's deviceinfo plugin sets it.
    public var modalias: String? {
        guard let c = characteristics.first(where: { $0.uuid == BluetoothUUID.normalize("2a50") }) else { return nil }
        let v = c.value
        guard v.count >= 7, v[0] == 1 || v[0] == 2 else { return nil }
        func hex(_ lo: UInt8, _ hi: UInt8) -> String { Hex.encode([hi, lo]).uppercased() }
        return (v[0] == 1 ? "bluetooth" : "usb") + ":v" + hex(v[1], v[2]) + "p" + hex(v[3], v[4]) + "d" + hex(v[5], v[6])
    }

    /// The Battery Level characteristic (2A19 of 180F), if the peripheral has one.
    public var batteryLevel: SimCharacteristic? {
        characteristics.first { $0.isBatteryLevel }
    }

    /// Every characteristic in handle order.
    public var characteristics: [SimCharacteristic] {
        services.flatMap(\.characteristics)
    }

    /// The UUIDs BlueZ lists in `Device1.UUIDs` once services are resolved: GAP, GATT and every
    /// primary service.
    public var resolvedUUIDs: [String] {
        var set = Set(services.filter(\.primary).map(\.uuid))
        set.insert(BluetoothUUID.normalize("1800")!)
        set.insert(BluetoothUUID.normalize("1801")!)
        return set.sorted()
    }

    /// The characteristic of the same service as `c` with UUID `uuid`.
    public func sibling(of c: SimCharacteristic, uuid: String) -> SimCharacteristic? {
        services.first { $0.path == c.servicePath }?.characteristics.first { $0.uuid == uuid }
    }
}
