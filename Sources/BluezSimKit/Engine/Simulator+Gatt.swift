import DBusKit

/// `org.bluez.GattCharacteristic1` and `GattDescriptor1`: reads, writes, notification sessions.
extension Simulator {
    static let maxAttributeLength = 512

    // MARK: - Characteristics

    func readValue(characteristic path: String, options: [String: DBusValue]) throws(DBusError) -> [UInt8] {
        let (d, c) = try characteristic(at: path)
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        let offset = try Self.offset(options)
        if let code = c.readError { throw BluezError.att(code) }
        try Self.checkAccess(flags: c.flags, operation: "read", paired: d.paired)
        let value = c.value
        guard offset <= value.count else { throw BluezError.att(0x07) }
        let out = Array(value[offset...])
        // bluetoothd writes what it read into its cache and signals the new Value.
        server.setProperties(path: c.path, interface: BluezNames.gattCharacteristic, ["Value": .bytes(out)])
        return out
    }

    func writeValue(characteristic path: String, value: [UInt8], options: [String: DBusValue]) throws(DBusError) {
        let (d, c) = try characteristic(at: path)
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        let offset = try Self.offset(options)
        var type: String?
        if let raw = options["type"] {
            guard case .string(let t) = raw.unwrapped, ["request", "command", "reliable"].contains(t) else {
                throw BluezError.invalidArguments
            }
            type = t
        }
        let canWrite = c.flags.contains { $0 == "write" || $0.hasSuffix("-write") && $0 != "authenticated-signed-writes" }
        let canCommand = c.flags.contains("write-without-response")
        let canReliable = c.flags.contains("reliable-write")
        let effective: String
        switch type {
        case nil:
            // gatt-client.c: reliable-write, else write (request), else write-without-response (command).
            if canReliable {
                effective = "reliable"
            } else if canWrite {
                effective = "request"
            } else if canCommand && offset == 0 {
                effective = "command"
            } else {
                throw BluezError.notSupported
            }
        case "command":
            guard offset == 0 else { throw BluezError.notSupported }
            if settings.strictWriteCommand && !canCommand { throw BluezError.notSupported }
            effective = "command"
        default:
            // A request (or reliable write) goes out; the peripheral refuses it without the write property.
            guard canWrite || (type == "reliable" && canReliable) else { throw BluezError.att(0x03) }
            effective = type!
        }
        let mtu = Int(d.spec.mtu ?? settings.mtu)
        if effective == "command" && value.count > mtu - 3 { throw BluezError.failed("Failed to initiate write") }
        if effective != "command" {
            try Self.checkAccess(flags: c.flags, operation: "write", paired: d.paired)
        }
        guard value.count <= Self.maxAttributeLength else { throw BluezError.att(0x0d) }
        guard offset <= c.value.count else { throw BluezError.att(0x07) }
        writeLog?.append(prefix: Array("\(d.spec.address) \(c.uuid) \(effective) \(offset) ".utf8), bytes: value)
        if let code = c.writeError, !(c.acceptedWrites?.contains(value) ?? false) {
            // A Write Command gets no response: the peripheral just drops it.
            if effective == "command" { return }
            throw BluezError.att(code)
        }
        c.store(value, offset: offset)
        logger.debug("write", metadata: [
            "address": "\(d.spec.address)", "uuid": "\(c.uuid)", "type": "\(effective)", "value": "\(Hex.encode(value))",
        ])
        if let echo = c.echoTo, let target = d.gatt.sibling(of: c, uuid: echo) {
            target.store(value, offset: 0)
            if target.isActive {
                Self.emitNotification(server: server, log: notifyLog, characteristic: target, value: value)
            }
        }
    }

    func startNotify(characteristic path: String, sender: String) throws(DBusError) {
        let (d, c) = try characteristic(at: path)
        guard c.canNotify else { throw BluezError.notSupported }
        let (already, active) = c.state.withLock { s in (s.sessions.contains(sender), s.active) }
        if already {
            // Registered and enabled: success; registered while the link is down: still pending.
            if active { return }
            throw BluezError.inProgress
        }
        c.state.withLock { _ = $0.sessions.insert(sender) }
        logger.debug("StartNotify", metadata: ["path": "\(path)", "client": "\(sender)"])
        if d.connection == .connected && d.servicesResolved { activate(c) }
    }

    func stopNotify(characteristic path: String, sender: String) throws(DBusError) {
        let (_, c) = try characteristic(at: path)
        guard removeNotifySession(c, sender: sender) else { throw BluezError.failed("No notify session started") }
        logger.debug("StopNotify", metadata: ["path": "\(path)", "client": "\(sender)"])
    }

    func acquire(characteristic path: String, flag: String) throws(DBusError) {
        let (d, c) = try characteristic(at: path)
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        guard c.flags.contains(flag) else { throw BluezError.notSupported }
        // File-descriptor passing is not simulated: clients fall back to WriteValue / StartNotify.
        throw BluezError.notSupported
    }

    /// Starts notifications of `c` if it has sessions and is not active yet.
    func activate(_ c: SimCharacteristic) {
        let token: UInt64? = c.state.withLock { s in
            guard !s.active, !s.sessions.isEmpty else { return nil }
            s.active = true
            s.token &+= 1
            return s.token
        }
        guard let token else { return }
        if server.property(path: c.path, interface: BluezNames.gattCharacteristic, name: "Notifying") != .bool(true) {
            server.setProperties(path: c.path, interface: BluezNames.gattCharacteristic, ["Notifying": .bool(true)])
        }
        if let interval = c.interval {
            scheduler.schedule(c, token: token, interval: interval)
        }
    }

    /// Ends `sender`'s session on `c`; the last one turns notifications off. False when it had none.
    @discardableResult
    func removeNotifySession(_ c: SimCharacteristic, sender: String) -> Bool {
        let (removed, empty) = c.state.withLock { s -> (Bool, Bool) in
            let removed = s.sessions.remove(sender) != nil
            if removed && s.sessions.isEmpty { s.active = false }
            return (removed, s.sessions.isEmpty)
        }
        if removed && empty,
           server.property(path: c.path, interface: BluezNames.gattCharacteristic, name: "Notifying") == .bool(true) {
            server.setProperties(path: c.path, interface: BluezNames.gattCharacteristic, ["Notifying": .bool(false)])
        }
        return removed
    }

    // MARK: - Descriptors

    func readDescriptor(path: String, options: [String: DBusValue]) throws(DBusError) -> [UInt8] {
        let (d, desc, c) = try descriptor(at: path)
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        let offset = try Self.offset(options)
        let value: [UInt8]
        if desc.isCCC {
            let enabled: UInt8 = c.flags.contains("notify") ? 0x01 : 0x02
            value = [c.isActive ? enabled : 0, 0]
        } else {
            try Self.checkAccess(flags: desc.flags, operation: "read", paired: d.paired)
            value = desc.value.withLock { $0 }
        }
        guard offset <= value.count else { throw BluezError.att(0x07) }
        let out = Array(value[offset...])
        server.setProperties(path: desc.path, interface: BluezNames.gattDescriptor, ["Value": .bytes(out)])
        return out
    }

    func writeDescriptor(path: String, value: [UInt8], options: [String: DBusValue]) throws(DBusError) {
        let (d, desc, _) = try descriptor(at: path)
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        let offset = try Self.offset(options)
        // bluetoothd refuses CCC writes: StartNotify/StopNotify manage them.
        if desc.isCCC { throw BluezError.notPermitted("Write not permitted") }
        try Self.checkAccess(flags: desc.flags, operation: "write", paired: d.paired)
        guard value.count <= Self.maxAttributeLength else { throw BluezError.att(0x0d) }
        try desc.value.withLock { (v: inout [UInt8]) throws(DBusError) in
            guard offset <= v.count else { throw BluezError.att(0x07) }
            v = Array(v.prefix(offset)) + value
        }
    }

    // MARK: - Helpers

    /// The `offset` option (`q`); other option keys are ignored as bluetoothd does.
    static func offset(_ options: [String: DBusValue]) throws(DBusError) -> Int {
        guard let raw = options["offset"] else { return 0 }
        guard case .uint16(let o) = raw.unwrapped else { throw BluezError.invalidArguments }
        return Int(o)
    }

    /// Checks an attribute's permission for `operation` (`read`/`write`): the plain flag, or an
    /// encrypted variant that needs a paired device (ATT Insufficient Encryption otherwise).
    static func checkAccess(flags: [String], operation: String, paired: Bool) throws(DBusError) {
        if flags.contains(operation) { return }
        let secured = flags.contains { $0.hasSuffix("-" + operation) && $0 != "authenticated-signed-writes" }
        if secured {
            if paired { return }
            throw BluezError.att(0x0f)
        }
        throw BluezError.att(operation == "read" ? 0x02 : 0x03)
    }
}
