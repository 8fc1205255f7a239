// TEMPORARY: stand-ins for the config API another branch adds; deleted at its merge.
public enum ConnectionPolicy: Sendable, Hashable {
    case always
    case poll(interval: Duration, listen: Duration)
    case advertisement(bindkey: [UInt8]?, timeout: Duration)
    public var name: String {
        switch self {
        case .always: return "always"
        case .poll: return "poll"
        case .advertisement: return "advertisement"
        }
    }
}
extension BridgeConfig.Bluetooth { public var maxConnections: Int { 7 } }
extension BridgeConfig.Device {
    public var connection: ConnectionPolicy { .always }
    public var onlyServices: [BluetoothUUID]? { nil }
}
public enum GattMapping {
    public static func shouldMap(service: BluetoothUUID, characteristic: BluetoothUUID, device: BridgeConfig.Device?) -> Bool {
        if let named = device?.characteristic(characteristic), named.uuid == characteristic { return true }
        if let only = device?.onlyServices { return only.contains(service) }
        return service != BluetoothUUID("1800")! && service != BluetoothUUID("1801")!
    }
}
public struct ConnectionSlots<ID: Hashable & Sendable>: Sendable {
    public let capacity: Int
    public private(set) var holders: Set<ID> = []
    public private(set) var waiting: [ID] = []
    public init(capacity: Int) { self.capacity = max(1, capacity) }
    public mutating func request(_ id: ID) -> Bool {
        if holders.contains(id) { return true }
        if waiting.contains(id) { return false }
        if holders.count < capacity && waiting.isEmpty { holders.insert(id); return true }
        waiting.append(id)
        return false
    }
    public mutating func release(_ id: ID) -> [ID] {
        if let i = waiting.firstIndex(of: id) { waiting.remove(at: i); return [] }
        guard holders.remove(id) != nil else { return [] }
        var granted: [ID] = []
        while holders.count < capacity, !waiting.isEmpty { let n = waiting.removeFirst(); holders.insert(n); granted.append(n) }
        return granted
    }
    public func holds(_ id: ID) -> Bool { holders.contains(id) }
}
