/// A peripheral the bridge has connected to, as the state file keeps it (SPEC §5).
public struct KnownPeripheral: Sendable, Hashable {
    /// `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// `public` or `random`.
    public var addressType: String
    /// The advertised name, when there was one.
    public var name: String?
    /// Service UUIDs (lowercase, full form) resolved at the last connection.
    public var services: [String]
    /// Characteristic map the bridge built: topic path (`service/characteristic`) → UUID.
    public var characteristics: [String: String]
    /// UUIDs (lowercase, full form, sorted) of characteristics whose read BlueZ refused for lack
    /// of pairing: reading one again would make BlueZ try to pair and drop the link, so the
    /// bridge does not read them after connecting (a `/get` still does). `forget` clears them.
    public var unreadable: [String]

    /// Creates an entry.
    public init(
        address: String, addressType: String, name: String? = nil, services: [String] = [],
        characteristics: [String: String] = [:], unreadable: [String] = []
    ) {
        self.address = address
        self.addressType = addressType
        self.name = name
        self.services = services
        self.characteristics = characteristics
        self.unreadable = unreadable
    }
}

/// The state file's content: `{"version": 1, "peripherals": [...]}`.
public struct KnownPeripherals: Sendable, Hashable {
    /// The peripherals, in the order they were first connected.
    public var peripherals: [KnownPeripheral]

    /// Creates a list.
    public init(_ peripherals: [KnownPeripheral] = []) {
        self.peripherals = peripherals
    }

    /// An error in the file's content.
    public struct FormatError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Parses the file's bytes.
    public static func decode(_ bytes: [UInt8]) throws(FormatError) -> KnownPeripherals {
        let json: JSONValue
        do {
            json = try JSONParser.parse(bytes, maxSize: 16 << 20)
        } catch {
            throw FormatError(description: "not JSON: \(error)")
        }
        guard let list = json["peripherals"]?.arrayValue else {
            throw FormatError(description: "no \"peripherals\" array")
        }
        var out: [KnownPeripheral] = []
        for (i, item) in list.enumerated() {
            guard let address = item["address"]?.stringValue, BluetoothAddress(address) != nil else {
                throw FormatError(description: "peripherals[\(i)]: missing or invalid \"address\"")
            }
            let type = item["address_type"]?.stringValue ?? "public"
            guard type == "public" || type == "random" else {
                throw FormatError(description: "peripherals[\(i)]: \"address_type\" must be public or random")
            }
            var chars: [String: String] = [:]
            for m in item["characteristics"]?.objectValue ?? JSONObject() {
                if let s = m.value.stringValue { chars[m.key] = s }
            }
            out.append(KnownPeripheral(
                address: BluetoothAddress(address)!.description, addressType: type, name: item["name"]?.stringValue,
                services: (item["services"]?.arrayValue ?? []).compactMap(\.stringValue), characteristics: chars,
                unreadable: (item["unreadable"]?.arrayValue ?? []).compactMap(\.stringValue)))
        }
        return KnownPeripherals(out)
    }

    /// The file's bytes (pretty enough for a person to read: one peripheral per line).
    public func encode() -> [UInt8] {
        var out = Array("{\"version\":1,\"peripherals\":[\n".utf8)
        for (i, p) in peripherals.enumerated() {
            var obj = JSONObject()
            obj.append("address", .string(p.address))
            obj.append("address_type", .string(p.addressType))
            if let name = p.name { obj.append("name", .string(name)) }
            obj.append("services", .array(p.services.map { .string($0) }))
            var chars = JSONObject()
            for k in p.characteristics.keys.sorted() { chars.append(k, .string(p.characteristics[k]!)) }
            obj.append("characteristics", .object(chars))
            if !p.unreadable.isEmpty { obj.append("unreadable", .array(p.unreadable.map { .string($0) })) }
            out += JSONValue.object(obj).jsonBytes
            out += Array((i == peripherals.count - 1 ? "\n" : ",\n").utf8)
        }
        out += Array("]}\n".utf8)
        return out
    }

    /// Adds or replaces the entry with the same address; true when something changed.
    @discardableResult
    public mutating func upsert(_ p: KnownPeripheral) -> Bool {
        if let i = peripherals.firstIndex(where: { $0.address == p.address }) {
            if peripherals[i] == p { return false }
            peripherals[i] = p
        } else {
            peripherals.append(p)
        }
        return true
    }

    /// Removes an entry by address; true when it was there.
    @discardableResult
    public mutating func remove(address: String) -> Bool {
        let before = peripherals.count
        peripherals.removeAll { $0.address == address }
        return peripherals.count != before
    }
}
