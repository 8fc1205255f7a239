import BridgeBase
import DBusKit

/// `GattCharacteristic1.StartNotify` / `StopNotify`: notification sessions per client, the CCC write, and turning
/// notifications back on after a reconnect.
extension Simulator {
    /// `StartNotify`. The first session of a connected device writes the CCC: the peripheral may answer
    /// late (`notify_delay`) or refuse (`notify_error`, the session is dropped and the error returned).
    /// While the characteristic is acquired (`AcquireNotify`, by anyone): `NotPermitted "Notify acquired"`.
    func startNotify(characteristic path: String, sender: String) async throws(DBusError) {
        let (d, c) = try characteristic(at: path)
        d.stats.startNotifyCalls &+= 1
        c.state.withLock { $0.startNotifyCalls &+= 1 }
        if c.state.withLock({ $0.acquisition != nil }) { throw BluezError.notPermitted("Notify acquired") }
        guard c.canNotify else { throw BluezError.notSupported }
        let (already, active) = c.state.withLock { s in (s.sessions.contains(sender), s.active) }
        if already {
            // Registered and enabled: success; registered while the link is down: still pending.
            if active { return }
            throw BluezError.inProgress
        }
        c.state.withLock { _ = $0.sessions.insert(sender) }
        logger.debug("StartNotify", metadata: ["path": "\(path)", "client": "\(sender)"])
        guard d.connection == .connected && d.servicesResolved, !c.isActive else { return }
        do {
            // The CCC write of an encrypted `notify`/`indicate` needs the bond (or a pairing).
            try await secureLink(d, c, operation: "notify")
        } catch {
            removeNotifySession(c, sender: sender)
            throw error
        }
        let faults = c.faults
        if let delay = faults.notifyDelay {
            let generation = d.linkGeneration
            await waitForPeripheral(device: d.path, delay)
            guard c.sessions.contains(sender) else { throw BluezError.failed("No notify session started") }
            guard d.linkGeneration == generation, d.connection == .connected else {
                // bluetoothd keeps the session and registers it again once the link is back.
                return
            }
        }
        if let e = c.faults.effectiveNotifyError {
            removeNotifySession(c, sender: sender)
            throw e.dbusError
        }
        activate(c)
    }

    /// `StopNotify`: ends `sender`'s session. On an acquired characteristic it ends the acquisition,
    /// whoever calls (bluetoothd's `destroy_sock`: the socket closes, `NotifyAcquired` false).
    func stopNotify(characteristic path: String, sender: String) throws(DBusError) {
        let (d, c) = try characteristic(at: path)
        if releaseAcquisition(c, signal: true) {
            d.stats.stopNotifyCalls &+= 1
            logger.debug("StopNotify released the acquired socket", metadata: ["path": "\(path)", "client": "\(sender)"])
            return
        }
        guard removeNotifySession(c, sender: sender) else { throw BluezError.failed("No notify session started") }
        d.stats.stopNotifyCalls &+= 1
        logger.debug("StopNotify", metadata: ["path": "\(path)", "client": "\(sender)"])
    }

    /// Turns notifications back on after services resolved; sessions of a characteristic whose CCC
    /// write the peripheral refuses (`notify_error`) are dropped. `AcquireNotify` calls waiting for
    /// the resolve go on.
    func resumeNotifications(_ d: SimulatedDevice) {
        resumeServiceWaiters(d)
        for c in d.gatt.characteristics {
            if c.faults.effectiveNotifyError != nil {
                for sender in c.sessions { removeNotifySession(c, sender: sender) }
            } else {
                activate(c)
            }
        }
    }

    /// Starts notifications of `c` if it has sessions (or an acquired socket) and is not active yet.
    /// `Notifying` becomes true for sessions only: bluetoothd leaves it false for an acquired socket.
    func activate(_ c: SimCharacteristic) {
        let (token, sessions): (UInt64?, Bool) = c.state.withLock { s in
            guard !s.active, s.hasSubscribers else { return (nil, false) }
            s.active = true
            s.token &+= 1
            return (s.token, !s.sessions.isEmpty)
        }
        guard let token else { return }
        if sessions,
           server.property(path: c.path, interface: BlueZNames.gattCharacteristic, name: "Notifying") != .bool(true) {
            server.setProperties(path: c.path, interface: BlueZNames.gattCharacteristic, ["Notifying": .bool(true)])
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
            if removed && !s.hasSubscribers { s.active = false }
            return (removed, s.sessions.isEmpty)
        }
        if removed && empty,
           server.property(path: c.path, interface: BlueZNames.gattCharacteristic, name: "Notifying") == .bool(true) {
            server.setProperties(path: c.path, interface: BlueZNames.gattCharacteristic, ["Notifying": .bool(false)])
        }
        return removed
    }
}
