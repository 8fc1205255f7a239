/// What a GATT characteristic allows (Core Bluetooth's `CBCharacteristicProperties`), read from
/// BlueZ's `GattCharacteristic1.Flags`.
public struct CharacteristicProperties: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    public static let broadcast = CharacteristicProperties(rawValue: 1 << 0)
    public static let read = CharacteristicProperties(rawValue: 1 << 1)
    public static let writeWithoutResponse = CharacteristicProperties(rawValue: 1 << 2)
    public static let write = CharacteristicProperties(rawValue: 1 << 3)
    public static let notify = CharacteristicProperties(rawValue: 1 << 4)
    public static let indicate = CharacteristicProperties(rawValue: 1 << 5)
    public static let authenticatedSignedWrites = CharacteristicProperties(rawValue: 1 << 6)
    public static let extendedProperties = CharacteristicProperties(rawValue: 1 << 7)
    public static let reliableWrite = CharacteristicProperties(rawValue: 1 << 8)
    public static let writableAuxiliaries = CharacteristicProperties(rawValue: 1 << 9)
    public static let encryptRead = CharacteristicProperties(rawValue: 1 << 10)
    public static let encryptWrite = CharacteristicProperties(rawValue: 1 << 11)
    public static let encryptAuthenticatedRead = CharacteristicProperties(rawValue: 1 << 12)
    public static let encryptAuthenticatedWrite = CharacteristicProperties(rawValue: 1 << 13)
    public static let secureRead = CharacteristicProperties(rawValue: 1 << 14)
    public static let secureWrite = CharacteristicProperties(rawValue: 1 << 15)
    public static let authorize = CharacteristicProperties(rawValue: 1 << 16)

    /// BlueZ's flag names, in bit order.
    public static let bluezNames: [(String, CharacteristicProperties)] = [
        ("broadcast", .broadcast), ("read", .read), ("write-without-response", .writeWithoutResponse),
        ("write", .write), ("notify", .notify), ("indicate", .indicate),
        ("authenticated-signed-writes", .authenticatedSignedWrites), ("extended-properties", .extendedProperties),
        ("reliable-write", .reliableWrite), ("writable-auxiliaries", .writableAuxiliaries),
        ("encrypt-read", .encryptRead), ("encrypt-write", .encryptWrite),
        ("encrypt-authenticated-read", .encryptAuthenticatedRead),
        ("encrypt-authenticated-write", .encryptAuthenticatedWrite), ("secure-read", .secureRead),
        ("secure-write", .secureWrite), ("authorize", .authorize),
    ]

    /// The properties of BlueZ's `Flags` (unknown names are ignored).
    public init(bluezFlags: some Sequence<String>) {
        var value = CharacteristicProperties()
        for flag in bluezFlags {
            if let entry = Self.bluezNames.first(where: { $0.0 == flag }) { value.insert(entry.1) }
        }
        self = value
    }

    /// Notifications or indications.
    public var canNotify: Bool { !isDisjoint(with: [.notify, .indicate]) }
    /// Readable.
    public var canRead: Bool { contains(.read) }
    /// Writes with response (`write` or `reliable-write`).
    public var canWriteWithResponse: Bool { !isDisjoint(with: [.write, .reliableWrite]) }
    /// Writes without response.
    public var canWriteWithoutResponse: Bool { contains(.writeWithoutResponse) }

    /// BlueZ's names of the flags set, e.g. `read, notify`.
    public var description: String {
        Self.bluezNames.filter { contains($0.1) }.map(\.0).joined(separator: ", ")
    }
}
