import BridgeBase
import DBusKit

/// `org.bluez.GattCharacteristic1` and `GattDescriptor1`: reads and writes (notification sessions: `Simulator+Notify`).
extension Simulator {
    static let maxAttributeLength = 512

    // MARK: - Characteristics

    /// `ReadValue`. bluetoothd sends the Read Request whatever the Flags say; the peripheral refuses it
    /// without read permission (`NotPermitted` "Read not permitted"). Concurrent reads with the same
    /// offset share one request (and its answer); another offset meanwhile gets `InProgress`.
    func readValue(characteristic path: String, options: [String: DBusValue]) async throws(DBusError) -> [UInt8] {
        let (d, c) = try characteristic(at: path)
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        let offset = try Self.offset(options)
        try await waitForPairingAttempt(d)
        do {
            try await secureLink(d, c, operation: "read")
        } catch {
            d.stats.reads &+= 1
            d.stats.readFailures &+= 1
            throw error
        }
        if let pending = pendingReads[c.path] {
            guard pending.offset == offset else { throw BluezError.inProgress }
            return try await pending.task.value.get()
        }
        guard let delay = c.faults.readDelay else { return try peripheralRead(d, c, offset: offset) }
        let generation = d.linkGeneration
        let devicePath = d.path
        let task = Task<Result<[UInt8], DBusError>, Never> { [weak self] in
            guard let self else { return .failure(BluezError.operationFailed) }
            await self.waitForPeripheral(device: devicePath, delay)
            return await self.finishDelayedRead(characteristic: path, offset: offset, generation: generation)
        }
        pendingReads[c.path] = PendingRead(offset: offset, task: task)
        return try await task.value.get()
    }

    func finishDelayedRead(characteristic path: String, offset: Int, generation: UInt64) -> Result<[UInt8], DBusError> {
        pendingReads[path] = nil
        // The link dropped while the request was pending: no ATT response (create_gatt_dbus_error(0)).
        guard let d = owningDevice(of: path), let c = d.gatt.characteristicsByPath[path] else {
            return .failure(BluezError.operationFailed)
        }
        guard d.linkGeneration == generation, d.connection == .connected else { return .failure(d.linkLossError) }
        do throws(DBusError) {
            return .success(try peripheralRead(d, c, offset: offset))
        } catch {
            return .failure(error)
        }
    }

    /// The peripheral's side of a read: permission, injected error, offset; then bluetoothd caches the
    /// value and signals it.
    func peripheralRead(_ d: SimulatedDevice, _ c: SimCharacteristic, offset: Int) throws(DBusError) -> [UInt8] {
        d.stats.reads &+= 1
        do throws(DBusError) {
            try Self.checkAccess(flags: c.flags, operation: "read", level: d.bondLevel)
            if let e = c.faults.effectiveReadError { throw e.dbusError }
        } catch {
            d.stats.readFailures &+= 1
            throw error
        }
        let value = c.value
        guard offset <= value.count else {
            d.stats.readFailures &+= 1
            throw BluezError.att(0x07)
        }
        let out = Array(value[offset...])
        // bluetoothd writes what it read into its cache and signals the new Value.
        server.setProperties(path: c.path, interface: BlueZNames.gattCharacteristic, ["Value": .bytes(out)])
        if c.isBatteryLevel && offset == 0 { Self.updateBatteryPercentage(server: server, characteristic: c, value: out) }
        return out
    }

    /// A request to a characteristic that needs encryption, on a device without a bond. The
    /// peripheral answers Insufficient Encryption; bluetoothd 5.66 then tries to elevate security,
    /// SMP pairing fails without an agent, and the link drops ``ScenarioSettings/pairingFailureDelay``
    /// later: `PropertiesChanged {ServicesResolved: false, Connected: false, RSSI}` first, then this
    /// request fails with `Failed "Operation failed with ATT error: 0x0e"`, and requests made
    /// meanwhile with `Failed "Not connected"`.
    func pairingFails(_ d: SimulatedDevice, _ c: SimCharacteristic) async throws(DBusError) -> Never {
        let generation = d.linkGeneration
        logger.info("encrypted characteristic without a bond: pairing fails, the link drops", metadata: [
            "address": "\(d.spec.address)", "uuid": "\(c.uuid)",
        ])
        if d.pairingUntil == nil { d.pairingUntil = clock.now + settings.pairingFailureDelay }
        await waitForPeripheral(device: d.path, max(.zero, d.pairingUntil! - clock.now))
        if d.linkGeneration == generation && d.connection == .connected {
            linkLost(d, pendingError: BluezError.failed("Not connected"))
        }
        throw BluezError.att(0x0e)
    }

    /// Requests made while a pairing attempt runs (see ``pairingFails(_:_:)``) wait for its end and
    /// fail with `Failed "Not connected"` when the link dropped.
    func waitForPairingAttempt(_ d: SimulatedDevice) async throws(DBusError) {
        guard let until = d.pairingUntil else { return }
        let generation = d.linkGeneration
        await waitForPeripheral(device: d.path, max(.zero, until - clock.now) + .milliseconds(50))
        guard d.linkGeneration == generation, d.connection == .connected else { throw d.linkLossError }
    }

    /// Waits `delay` for a late peripheral, or less when the link of the device at `path` drops first
    /// (bluetoothd then fails the pending request at once).
    func waitForPeripheral(device path: String, _ delay: Duration) async {
        nextWaiterID &+= 1
        let id = nextWaiterID
        let waiter = Task<Void, Never> { try? await Task.sleep(for: delay) }
        linkWaiters[path, default: [:]][id] = waiter
        await waiter.value
        linkWaiters[path]?[id] = nil
        if linkWaiters[path]?.isEmpty == true { linkWaiters[path] = nil }
    }

    /// `WriteValue`, deciding the procedure as bluetoothd 5.66 does (`characteristic_write_value`):
    /// `type` given → that procedure, whatever the Flags say (a request to a characteristic without
    /// write permission is refused by the peripheral: `NotPermitted` "Write not permitted"; a command is
    /// sent and replied to with success); no `type` → reliable-write, else write (request), else
    /// write-without-response (command), else `NotSupported`. While a write request is pending on
    /// the characteristic, any other `WriteValue` gets `InProgress`.
    func writeValue(characteristic path: String, value: [UInt8], options: [String: DBusValue]) async throws(DBusError) {
        let (d, c) = try characteristic(at: path)
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        guard !pendingWrites.contains(c.path) else { throw BluezError.inProgress }
        let offset = try Self.offset(options)
        var type: String?
        if let raw = options["type"] {
            guard case .string(let t) = raw.unwrapped else { throw BluezError.invalidArguments }
            type = t.lowercased()  // bluetoothd compares with strcasecmp
        }
        let canWrite = c.flags.contains { $0 == "write" || $0.hasSuffix("-write") && $0 != "authenticated-signed-writes" }
        let canCommand = c.flags.contains("write-without-response")
        let canReliable = c.flags.contains("reliable-write")
        let effective: String
        switch type {
        case nil:
            if canReliable {
                effective = "reliable"
            } else if canWrite {
                effective = "request"
            } else if canCommand && offset == 0 {
                effective = "command"
            } else {
                throw BluezError.notSupported
            }
        case "reliable", "request":
            effective = type!
        case "command":
            guard offset == 0 else { throw BluezError.notSupported }
            effective = "command"
        default:
            // An unknown type matches no procedure.
            throw BluezError.notSupported
        }
        if effective != "command" {
            try await waitForPairingAttempt(d)
            do {
                try await secureLink(d, c, operation: "write")
            } catch {
                d.stats.writeFailures &+= 1
                throw error
            }
        }
        if effective == "command" {
            let mtu = Int(d.spec.mtu ?? settings.mtu)
            if value.count > mtu - 3 { throw BluezError.failed("Failed to initiate write") }
            // A Write Command has no response: the reply is success whatever the peripheral does with it.
            peripheralCommand(d, c, value: value, canCommand: canCommand)
            return
        }
        if let delay = c.faults.writeDelay {
            pendingWrites.insert(c.path)
            let generation = d.linkGeneration
            await waitForPeripheral(device: d.path, delay)
            pendingWrites.remove(c.path)
            guard d.linkGeneration == generation, d.connection == .connected else { throw d.linkLossError }
        }
        try peripheralWrite(d, c, value: value, offset: offset, type: effective)
    }

    /// The peripheral's side of a write request: permission, length, offset, injected error, an
    /// exchange rule's error; then the value is stored, logged and echoed, and the rule's effects run.
    func peripheralWrite(_ d: SimulatedDevice, _ c: SimCharacteristic, value: [UInt8], offset: Int,
                         type: String) throws(DBusError) {
        var rule: ExchangeRule?
        do throws(DBusError) {
            // A request (or reliable write) goes out; the peripheral refuses it without write permission.
            let reliable = type == "reliable" && c.flags.contains("reliable-write")
            try Self.checkAccess(flags: reliable ? c.flags + ["write"] : c.flags, operation: "write", level: d.bondLevel)
            guard value.count <= Self.maxAttributeLength else { throw BluezError.att(0x0d) }
            guard offset <= c.value.count else { throw BluezError.att(0x07) }
            if let e = c.faults.writeError(for: value) { throw e.dbusError }
            rule = exchangeRule(d, c, value: value)
            if let rule, let e = rule.error {
                runExchange(d, rule)
                throw e.dbusError
            }
        } catch {
            d.stats.writeFailures &+= 1
            logger.debug("write refused", metadata: [
                "address": "\(d.spec.address)", "uuid": "\(c.uuid)", "value": "\(Hex.encode(value))", "error": "\(error)",
            ])
            throw error
        }
        accept(d, c, value: value, offset: offset, type: type)
        if let rule { runExchange(d, rule) }
    }

    /// The peripheral's side of a Write Command: applied when it may write the characteristic and no
    /// injected error matches (then an exchange rule's effects run; its error drops the command); dropped
    /// silently otherwise.
    func peripheralCommand(_ d: SimulatedDevice, _ c: SimCharacteristic, value: [UInt8], canCommand: Bool) {
        let permitted: Bool
        if canCommand {
            permitted = true
        } else if settings.strictWriteCommand {
            permitted = false
        } else {
            permitted = (try? Self.checkAccess(flags: c.flags, operation: "write", level: d.bondLevel)) != nil
        }
        guard permitted, value.count <= Self.maxAttributeLength, c.faults.writeError(for: value) == nil else {
            d.stats.writeFailures &+= 1
            logger.debug("write command dropped by the peripheral", metadata: [
                "address": "\(d.spec.address)", "uuid": "\(c.uuid)", "value": "\(Hex.encode(value))",
            ])
            return
        }
        let rule = exchangeRule(d, c, value: value)
        if let rule, rule.error != nil {
            d.stats.writeFailures &+= 1
            logger.debug("write command refused by an exchange rule", metadata: [
                "address": "\(d.spec.address)", "uuid": "\(c.uuid)", "value": "\(Hex.encode(value))",
            ])
            runExchange(d, rule)
            return
        }
        accept(d, c, value: value, offset: 0, type: "command")
        if let rule { runExchange(d, rule) }
    }

    /// A write the peripheral accepted: stored, logged, echoed.
    func accept(_ d: SimulatedDevice, _ c: SimCharacteristic, value: [UInt8], offset: Int, type: String) {
        d.stats.writes &+= 1
        // With several adapters the line ends with the adapter the write came through (a 7th field;
        // single-adapter scenarios keep the 6-field lines their readers expect).
        writeLog?.append(prefix: Array("\(d.spec.address) \(c.uuid) \(type) \(offset) ".utf8), bytes: value,
                         suffix: adapterOrder.count > 1 ? Array(" \(d.adapterName)".utf8) : [])
        c.store(value, offset: offset)
        if c.isBatteryLevel { Self.updateBatteryPercentage(server: server, characteristic: c, value: c.value) }
        logger.debug("write", metadata: [
            "address": "\(d.spec.address)", "uuid": "\(c.uuid)", "type": "\(type)", "value": "\(Hex.encode(value))",
        ])
        if let echo = c.echoTo, let target = d.gatt.sibling(of: c, uuid: echo) {
            target.store(value, offset: 0)
            if target.isActive {
                Self.emitNotification(server: server, log: notifyLog, characteristic: target, value: value,
                                      socket: target.notifySocket)
            }
        }
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
            try Self.checkAccess(flags: desc.flags, operation: "read", level: d.bondLevel)
            value = desc.value.withLock { $0 }
        }
        guard offset <= value.count else { throw BluezError.att(0x07) }
        let out = Array(value[offset...])
        server.setProperties(path: desc.path, interface: BlueZNames.gattDescriptor, ["Value": .bytes(out)])
        return out
    }

    func writeDescriptor(path: String, value: [UInt8], options: [String: DBusValue]) throws(DBusError) {
        let (d, desc, _) = try descriptor(at: path)
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        let offset = try Self.offset(options)
        // bluetoothd refuses CCC writes: StartNotify/StopNotify manage them.
        if desc.isCCC { throw BluezError.notPermitted("Write not permitted") }
        try Self.checkAccess(flags: desc.flags, operation: "write", level: d.bondLevel)
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

    /// Checks an attribute's permission for `operation` (`read`/`write`) on a link whose bond gives
    /// `level`: the plain flag, or a secured variant the bond satisfies (ATT Insufficient Encryption
    /// 0x0f, or Insufficient Authentication 0x05 for an authenticated one, otherwise).
    static func checkAccess(flags: [String], operation: String, level: SecurityLevel) throws(DBusError) {
        if flags.contains(operation) { return }
        let needed = SimCharacteristic.requiredSecurity(flags: flags, operation: operation)
        if needed > .none {
            if level >= needed { return }
            throw BluezError.att(needed == .authenticated ? 0x05 : 0x0f)
        }
        throw BluezError.att(operation == "read" ? 0x02 : 0x03)
    }
}
