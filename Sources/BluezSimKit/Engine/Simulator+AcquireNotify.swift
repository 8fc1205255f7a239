import BridgeBase
import DBusKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// `GattCharacteristic1.AcquireNotify` as bluetoothd 5.66 implements it (src/gatt-client.c
/// `characteristic_acquire_notify`, `create_sock`, `notify_io_cb`, `sock_hup`,
/// `btd_gatt_client_disconnected`): the notifications of a characteristic go, one packet per value,
/// to a `SOCK_SEQPACKET` socket whose other end the client received in the reply.
extension Simulator {
    /// `AcquireNotify(a{sv}) -> (h fd, q mtu)`. Checks in bluetoothd's order: no link →
    /// `Failed "Not connected"`; acquired already (by anyone) → `NotPermitted "Notify acquired"`;
    /// `StartNotify` sessions exist → `InProgress "In Progress"`; no `notify` property (5.66 does not
    /// acquire indicate-only characteristics) or scenario `acquire_notify: false` → `NotSupported`.
    /// Then the security the CCC write needs (a pairing of bluetoothd's own, ``secureLink(_:_:operation:)``), the CCC write (`notify_delay`, `notify_error`), the wait for the resolve, and the socket
    /// pair. Returns the client's end (the reply passes it; ``closePassedDescriptor(_:)`` closes
    /// this copy after the reply) and the ATT MTU.
    func acquireNotify(characteristic path: String, sender: String) async throws(DBusError) -> (Int32, UInt16) {
        let (d, c) = try characteristic(at: path)
        d.stats.acquireNotifyCalls &+= 1
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        let (acquired, sessions) = c.state.withLock { s in (s.acquisition != nil, !s.sessions.isEmpty) }
        if acquired { throw BluezError.notPermitted("Notify acquired") }
        if sessions { throw BluezError.inProgress }
        guard c.clientFlags.contains("notify"), c.acquireNotify else { throw BluezError.notSupported }
        lastAcquisitionID &+= 1
        let id = lastAcquisitionID
        c.state.withLock { $0.acquisition = NotifyAcquisition(id: id, owner: sender) }
        logger.debug("AcquireNotify", metadata: ["path": "\(path)", "client": "\(sender)"])
        let generation = d.linkGeneration
        // The CCC write of an encrypted `notify` needs the bond: without one bluetoothd pairs on its own (`bt_att`
        // `change_security`), as for StartNotify; a failed pairing drops the link and fails the call.
        do {
            try await secureLink(d, c, operation: "notify")
        } catch {
            dropPending(c, id: id)
            throw error
        }
        try checkPending(d, c, id: id, generation: generation)
        // The CCC write: the peripheral may answer late or refuse.
        if let delay = c.faults.notifyDelay { await waitForPeripheral(device: d.path, delay) }
        try checkPending(d, c, id: id, generation: generation)
        if let e = c.faults.effectiveNotifyError {
            // 5.66 never replies then (fixed in 5.84, 476ae809a: the ATT error, and the socket state
            // is cleaned up); the sim does what the fixed versions do.
            dropPending(c, id: id)
            throw e.dbusError
        }
        // bluetoothd answers once its GATT client is ready (characteristic_ready).
        if !d.servicesResolved {
            await waitForServices(d)
            try checkPending(d, c, id: id, generation: generation)
        }
        let (socket, clientEnd): (NotifySocket, Int32)
        switch NotifySocket.makePair(id: id, characteristic: c) {
        case .success(let pair):
            (socket, clientEnd) = pair
        case .failure(let e):
            dropPending(c, id: id)
            throw BluezError.failed(e.message)
        }
        c.state.withLock { $0.acquisition?.socket = socket }
        socketWatcher.add(socket)
        socketLoop.wake()
        // Get/GetAll say true from now on; the signal follows the reply (g_dbus's property changes
        // go out from an idle callback after create_sock's reply).
        server.setProperties(path: c.path, interface: BlueZNames.gattCharacteristic, ["NotifyAcquired": .bool(true)],
                             emit: false)
        activate(c)
        return (clientEnd, d.spec.mtu ?? settings.mtu)
    }

    /// After the `AcquireNotify` reply: closes the simulator's copy of the client's end (libdbus
    /// passed a duplicate; the client's end must have no other holder, so that the client closing
    /// it is a hang-up here).
    static func closePassedDescriptor(_ values: [DBusValue]) {
        guard case .unixFD(let fd)? = values.first, fd >= 0 else { return }
        close(fd)
    }

    /// After the `AcquireNotify` reply: signals `NotifyAcquired: true`, once per acquisition.
    func announceAcquisition(characteristic path: String) {
        guard let c = (try? characteristic(at: path))?.1 else { return }
        let announce = c.state.withLock { s -> Bool in
            guard s.acquisition?.socket != nil, s.acquisition?.announced == false else { return false }
            s.acquisition?.announced = true
            return true
        }
        guard announce else { return }
        server.setProperties(path: c.path, interface: BlueZNames.gattCharacteristic, ["NotifyAcquired": .bool(true)])
    }

    /// Ends the acquisition of `c` (pending or not): its socket is shut down and closed (the client
    /// sees `POLLHUP`), notifications stop, and `NotifyAcquired` becomes false (signalled when
    /// `signal`). False when `c` was not acquired.
    @discardableResult
    func releaseAcquisition(_ c: SimCharacteristic, signal: Bool) -> Bool {
        guard let acquisition = c.state.withLock({ s -> NotifyAcquisition? in
            guard let a = s.acquisition else { return nil }
            s.acquisition = nil
            if !s.hasSubscribers { s.active = false }
            return a
        }) else { return false }
        if let socket = acquisition.socket {
            socketWatcher.remove(socket)
            socket.hangUp()
            logger.debug("acquired notify socket closed", metadata: ["path": "\(c.path)", "client": "\(acquisition.owner)"])
        }
        if server.property(path: c.path, interface: BlueZNames.gattCharacteristic, name: "NotifyAcquired") == .bool(true) {
            server.setProperties(path: c.path, interface: BlueZNames.gattCharacteristic, ["NotifyAcquired": .bool(false)],
                                 emit: signal)
        }
        return true
    }

    /// The owner of `c`'s acquisition left the bus: bluetoothd unregisters the notification (no more
    /// values; the CCC is written off) but keeps the socket, and `NotifyAcquired` true, until it hangs
    /// up. A pending acquisition ends.
    func acquirerVanished(_ c: SimCharacteristic, _ owner: String) {
        c.state.withLock { s in
            guard let a = s.acquisition, a.owner == owner else { return }
            if a.socket == nil {
                s.acquisition = nil
            } else {
                s.acquisition?.subscribed = false
            }
            if !s.hasSubscribers { s.active = false }
        }
    }

    /// The client closed its end of `socket` (poll thread report): bluetoothd's `sock_hup`.
    func notifySocketHungUp(_ socket: NotifySocket) {
        let c = socket.characteristic
        guard c.state.withLock({ $0.acquisition?.socket === socket }) else { return }
        logger.debug("the client closed its acquired notify socket", metadata: ["path": "\(c.path)"])
        releaseAcquisition(c, signal: true)
    }

    /// The client wrote `value` into its end of `socket`: bluetoothd's `sock_read` sends it to the
    /// peripheral as a Write Without Response.
    func notifySocketPacket(_ socket: NotifySocket, _ value: [UInt8]) {
        let c = socket.characteristic
        guard c.state.withLock({ $0.acquisition?.socket === socket }), let d = owningDevice(of: c.path),
              d.connection == .connected, value.count <= Int(d.spec.mtu ?? settings.mtu) - 3 else { return }
        peripheralCommand(d, c, value: value, canCommand: c.flags.contains("write-without-response"))
    }

    /// Starts the poll thread of the acquired sockets.
    func startSocketWatcher() {
        socketWatcher.setHandlers(hangUp: { [weak self] socket in
            Task { await self?.notifySocketHungUp(socket) }
        }, packet: { [weak self] socket, value in
            Task { await self?.notifySocketPacket(socket, value) }
        })
        socketLoop.add(socketWatcher)
        socketLoop.start()
    }

    /// `AcquireWrite`: not simulated (clients fall back to `WriteValue`).
    func acquireWrite(characteristic path: String) throws(DBusError) {
        let (d, c) = try characteristic(at: path)
        guard d.connection == .connected else { throw BluezError.failed("Not connected") }
        guard c.clientFlags.contains("write-without-response") else { throw BluezError.notSupported }
        throw BluezError.notSupported
    }

    // MARK: - Pending acquisitions

    /// Throws when the pending acquisition `id` of `c` ended meanwhile: the link dropped
    /// (`Failed "Operation failed"`, what a pending request gets) or it was dropped (its client left,
    /// `StopNotify`, the objects went away).
    func checkPending(_ d: SimulatedDevice, _ c: SimCharacteristic, id: UInt64, generation: UInt64) throws(DBusError) {
        guard d.linkGeneration == generation, d.connection == .connected else {
            dropPending(c, id: id)
            throw d.linkLossError
        }
        guard c.state.withLock({ $0.acquisition?.id == id }) else { throw BluezError.operationFailed }
    }

    func dropPending(_ c: SimCharacteristic, id: UInt64) {
        c.state.withLock { s in
            if s.acquisition?.id == id { s.acquisition = nil }
        }
    }

    /// Waits until services of `d` resolve or its link drops.
    func waitForServices(_ d: SimulatedDevice) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            serviceWaiters[d.path, default: []].append(continuation)
        }
    }

    func resumeServiceWaiters(_ d: SimulatedDevice) {
        guard let waiters = serviceWaiters.removeValue(forKey: d.path) else { return }
        for w in waiters { w.resume() }
    }
}
