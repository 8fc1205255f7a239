import BridgeBase
import DBusKit

/// A client's discovery filter (`Adapter1.SetDiscoveryFilter`), parsed and checked as bluetoothd does.
public struct DiscoveryFilter: Sendable, Equatable {
    /// Service UUIDs (full form); empty matches any device.
    public var uuids: [String] = []
    /// Minimum RSSI.
    public var rssi: Int16?
    /// Maximum path loss (needs TX power in the advertisement).
    public var pathloss: UInt16?
    /// `auto`, `bredr` or `le`.
    public var transport: String = "auto"
    /// Report every advertisement, not just changes.
    public var duplicateData: Bool = true
    /// Make the adapter discoverable while discovering.
    public var discoverable: Bool = false
    /// Address or name prefix.
    public var pattern: String = ""

    /// The filter keys BlueZ 5.66 supports (`GetDiscoveryFilters`).
    public static let supportedKeys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    /// An unrestricted filter.
    public init() {}

    /// Parses the `a{sv}` argument. Returns nil for an empty dictionary (filter removed).
    /// Throws `org.bluez.Error.InvalidArguments` for unknown keys, wrong types and bad values.
    public static func parse(_ dict: [String: DBusValue]) throws(DBusError) -> DiscoveryFilter? {
        if dict.isEmpty { return nil }
        var f = DiscoveryFilter()
        for (key, raw) in dict {
            let v = raw.unwrapped
            switch key {
            case "UUIDs":
                guard case .array("s", let items) = v else { throw BluezError.invalidArguments }
                for item in items {
                    guard let s = item.string, let u = BluetoothUUID.normalize(s) else { throw BluezError.invalidArguments }
                    f.uuids.append(u)
                }
            case "RSSI":
                guard case .int16(let r) = v, r >= -127, r <= 20 else { throw BluezError.invalidArguments }
                f.rssi = r
            case "Pathloss":
                guard case .uint16(let p) = v, p <= 137 else { throw BluezError.invalidArguments }
                f.pathloss = p
            case "Transport":
                guard case .string(let t) = v, ["auto", "bredr", "le"].contains(t) else { throw BluezError.invalidArguments }
                f.transport = t
            case "DuplicateData":
                guard case .bool(let b) = v else { throw BluezError.invalidArguments }
                f.duplicateData = b
            case "Discoverable":
                guard case .bool(let b) = v else { throw BluezError.invalidArguments }
                f.discoverable = b
            case "Pattern":
                guard case .string(let p) = v else { throw BluezError.invalidArguments }
                f.pattern = p
            default:
                throw BluezError.invalidArguments
            }
        }
        if f.rssi != nil && f.pathloss != nil { throw BluezError.invalidArguments }
        return f
    }

    /// True when an advertisement of `device` received at `rssi` passes this filter.
    public func matches(_ device: PeripheralSpec, rssi: Int16) -> Bool {
        if transport == "bredr" { return false }  // every simulated peripheral is LE-only
        if !uuids.isEmpty && !device.advertisedServices.contains(where: { uuids.contains($0) }) { return false }
        if let min = self.rssi, rssi < min { return false }
        if let max = pathloss {
            guard let tx = device.txPower, Int(tx) - Int(rssi) <= Int(max) else { return false }
        }
        if !pattern.isEmpty {
            let byAddress = device.address.hasPrefix(pattern.uppercased())
            let byName = device.name?.hasPrefix(pattern) ?? false
            if !byAddress && !byName { return false }
        }
        return true
    }
}
