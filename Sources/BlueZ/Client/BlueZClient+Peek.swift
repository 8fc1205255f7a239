import BridgeBase
import DBusKit

/// What one advertisement report changed (`PropertiesChanged` of `Device1` with nothing but
/// `RSSI`, `ServiceData` and `ManufacturerData`), read in place.
public struct AdvertisementChange: Sendable {
    /// The new RSSI.
    public var rssi: Int16?
    /// The new `ServiceData` (`a{sv}`), as BlueZ signals it: every entry it holds.
    public var serviceData: DBusValue?
    /// The new `ManufacturerData` (`a{qv}`).
    public var manufacturerData: DBusValue?

    /// Whether the report carried data (not only an RSSI).
    public var dataChanged: Bool { serviceData != nil || manufacturerData != nil }
}

extension BlueZClient {
    /// The two signals BlueZ sends by the thousand, read in place on the I/O thread before
    /// anything is decoded: a characteristic's `Value` (notifications through `StartNotify`) and
    /// a device's advertisement report. Anything else in the same signal (another property, an
    /// invalidated one) leaves it to ``handle(_:)``, which decodes the whole signal.
    func peek(path: String, interface: String, member: String, arguments: DBusArgumentReader) -> Bool {
        guard member == "PropertiesChanged", interface == "org.freedesktop.DBus.Properties" else { return false }
        if let change = Self.readAdvertisementReport(arguments) {
            apply(change, path: path)
            return true
        }
        if let bytes = Self.readValue(arguments) {
            let handler = state.withLock { $0.valueHandler }
            handler?(path, bytes)
            return true
        }
        return false
    }

    /// Whether the reader (on `PropertiesChanged`'s third argument) shows no invalidated property.
    private static func noneInvalidated(_ args: DBusArgumentReader) -> Bool {
        args.isEnd || (args.kind == .array && args.children().isEnd)
    }

    /// The arguments of `PropertiesChanged(GattCharacteristic1, {Value: ay}, [])` (the reader on
    /// the first): the value; nil for anything else.
    public static func readValue(_ arguments: DBusArgumentReader) -> [UInt8]? {
        var args = arguments
        guard args.stringEquals("org.bluez.GattCharacteristic1") else { return nil }
        args.next()
        var entries = args.children()
        guard entries.kind == .dictEntry else { return nil }
        var entry = entries.children()
        guard entry.stringEquals("Value") else { return nil }
        entry.next()
        guard let bytes = entry.children().bytes() else { return nil }
        entries.next()
        args.next()
        guard entries.isEnd, noneInvalidated(args) else { return nil }
        return bytes
    }

    /// The arguments of `PropertiesChanged(Device1, {RSSI, ServiceData, ManufacturerData}, [])`
    /// (the reader on the first): what changed; nil when anything else is in the signal.
    public static func readAdvertisementReport(_ arguments: DBusArgumentReader) -> AdvertisementChange? {
        var args = arguments
        guard args.stringEquals("org.bluez.Device1") else { return nil }
        args.next()
        var change = AdvertisementChange()
        var entries = args.children()
        guard entries.kind == .dictEntry else { return nil }
        while !entries.isEnd {
            guard entries.kind == .dictEntry else { return nil }
            var entry = entries.children()
            let key = entry
            entry.next()
            let value = entry.children()
            if key.stringEquals("RSSI") {
                guard let v = value.int16() else { return nil }
                change.rssi = v
            } else if key.stringEquals("ServiceData") {
                guard value.kind == .array else { return nil }
                change.serviceData = value.value()
            } else if key.stringEquals("ManufacturerData") {
                guard value.kind == .array else { return nil }
                change.manufacturerData = value.value()
            } else {
                return nil
            }
            entries.next()
        }
        args.next()
        return noneInvalidated(args) ? change : nil
    }

    /// Applies a report: the object tree is updated in place and the report goes to the
    /// advertisement handler; the supervisor hears of it (an event) only when the handler did
    /// not take it.
    private func apply(_ change: AdvertisementChange, path: String) {
        let dataChanged = change.dataChanged
        let (report, handler) = state.withLock { st -> (BlueZAdvertisement?, BlueZAdvertisementHandler?) in
            guard let p = st.tree.applyAdvertisement(
                path: path, rssi: change.rssi, serviceData: change.serviceData, manufacturerData: change.manufacturerData),
                let handler = st.advertisementHandler
            else { return (nil, nil) }
            // An RSSI-only report reuses what the last report parsed (address, name, UUIDs, data); a
            // data report parses only the data that changed (anything else that changes on the
            // device object goes through `handle(_:)`, which drops the cached basis).
            let basis: ReportBasis
            if var cached = st.reportBasis[path] {
                if dataChanged {
                    if change.serviceData != nil { cached.serviceData = BlueZDevice.serviceData(p["ServiceData"]) }
                    if change.manufacturerData != nil { cached.manufacturerData = BlueZDevice.manufacturerData(p["ManufacturerData"]) }
                    st.reportBasis[path] = cached
                }
                basis = cached
            } else {
                guard let parsed = ReportBasis(p) else { return (nil, nil) }
                st.reportBasis[path] = parsed
                basis = parsed
            }
            let report = BlueZAdvertisement(
                path: path, basis, rssi: change.rssi.map(Int.init) ?? p["RSSI"]?.int, dataChanged: dataChanged)
            return (report, handler)
        }
        if let report, let handler, handler(report) { return }
        var names = [String]()
        if change.rssi != nil { names.append("RSSI") }
        if change.serviceData != nil { names.append("ServiceData") }
        if change.manufacturerData != nil { names.append("ManufacturerData") }
        eventContinuation.yield(.propertiesChanged(path: path, interface: BlueZ.device, changed: names))
    }
}

/// What an advertisement report of a device needs besides its RSSI, parsed from the device's
/// properties; ``BlueZClient`` keeps one per device object between reports and drops it whenever
/// the object changes in any other way.
struct ReportBasis: Sendable {
    var address: BluetoothAddress
    var addressType: AddressType
    var serviceData: [BluetoothUUID: [UInt8]]
    var manufacturerData: [UInt16: [UInt8]]
    /// ``BlueZDevice/localName``.
    var name: String?
    var serviceUUIDs: [BluetoothUUID]

    init?(_ p: [String: DBusValue]) {
        guard let address = p["Address"]?.string.flatMap({ BluetoothAddress($0) }) else { return nil }
        self.address = address
        addressType = p["AddressType"]?.string.flatMap(AddressType.init(rawValue:)) ?? .public
        name = BlueZNames.localName(name: p["Name"]?.string, alias: p["Alias"]?.string, address: address)
        serviceUUIDs = (p["UUIDs"]?.strings ?? []).compactMap { BluetoothUUID($0) }
        serviceData = BlueZDevice.serviceData(p["ServiceData"])
        manufacturerData = BlueZDevice.manufacturerData(p["ManufacturerData"])
    }
}

extension BlueZAdvertisement {
    /// A report of the device at `path`.
    init(path: String, _ basis: ReportBasis, rssi: Int?, dataChanged: Bool) {
        self.init(
            path: path, address: basis.address, rssi: rssi, serviceData: basis.serviceData,
            manufacturerData: basis.manufacturerData, dataChanged: dataChanged, addressType: basis.addressType,
            name: basis.name, serviceUUIDs: basis.serviceUUIDs)
    }
}
