import BridgeCore

/// The managed devices' records (the registry's content): a session starts, reports, ends.
extension SupervisorCore {
    /// A session starts: its record, and the snapshot of its device object (`object`) `bridge/devices` shows.
    package mutating func addRecord(_ record: DeviceRecord, object: DeviceSnapshot? = nil) {
        managedSnapshots[record.path] = object
        sessions.insert(record.path)
        sessionOf[record.address.description] = record.path
        placingAt[record.address.description] = nil
        placeOpen.remove(record.address.description)
        devices[record.path] = record
    }

    /// A session's loop ended: its address may get another.
    mutating func sessionEnded(_ path: String) {
        sessions.remove(path)
        let address = BlueZNames.address(fromDevicePath: path)
        if sessionOf[address] == path {
            sessionOf[address] = nil
            placement.link(address, on: nil)
        }
    }

    /// Changes a managed device's state and writes it to the registry; false when it is not managed.
    @discardableResult
    package mutating func update(_ path: String, _ out: inout [Action], _ body: (inout DeviceRecord) -> Void) -> Bool {
        guard var record = devices[path] else { return false }
        body(&record)
        devices[path] = record
        out.append(.record(record))
        return true
    }

    package mutating func removeRecord(_ path: String) -> DeviceRecord? {
        managedSnapshots[path] = nil
        return devices.removeValue(forKey: path)
    }
}
