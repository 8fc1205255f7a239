/// The GATT database of one simulated peripheral, with handles assigned the way a peripheral's
/// attribute table lays them out and paths named the way BlueZ names them.
///
/// Handles 0x0001-0x0007 belong to the GAP service (0x1800), which BlueZ does not export.
/// When `genericAttributeService` is set, the Generic Attribute service (0x1801) with its
/// Service Changed characteristic (0x2A05, indicate) follows at 0x0008, as on most real
/// peripherals and as BlueZ exports it. Scenario services follow. Each characteristic takes
/// a declaration handle (its path component), a value handle, then one handle per descriptor,
/// the CCC (0x2902) first for notify/indicate characteristics.
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
            ]))
        } else {
            next = 0x000a
        }
        services.append(contentsOf: spec.services)
        let ccc = BluetoothUUID.normalize("2902")!
        var built: [SimService] = []
        for s in services {
            let start = next
            let servicePath = devicePath + "/" + BluezNames.handleComponent("service", start)
            next &+= 1
            var chars: [SimCharacteristic] = []
            for c in s.characteristics {
                let decl = next
                next &+= 2  // declaration + value
                let charPath = servicePath + "/" + BluezNames.handleComponent("char", decl)
                var descs: [SimDescriptor] = []
                let notifies = c.flags.contains("notify") || c.flags.contains("indicate")
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
                chars.append(SimCharacteristic(spec: c, handle: decl, servicePath: servicePath, address: spec.address,
                                               descriptors: descs, seed: seed))
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
