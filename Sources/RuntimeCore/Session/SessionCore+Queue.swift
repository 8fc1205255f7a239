import BridgeCore

extension SessionCore {
    /// Starts the next GATT operation when none is in flight: setup first (while subscribing),
    /// then commands and polls in arrival order (while ready).
    package mutating func pump(_ s: inout Step) {
        if isPoll { steerPollConnection(&s) }
        while !queue.busy && !ended {
            if let op = link?.setup.operations.first {
                guard machine.isConnected else { return }
                link?.setup.operations.removeFirst()
                start(op, &s)
                continue
            }
            guard machine.isReady, !(link?.setup.running ?? false), let op = queue.work.first else { return }
            queue.work.removeFirst()
            start(op, &s)
        }
    }

    /// Runs one operation: here when it needs no BlueZ call, else as an action whose completion
    /// comes back as ``SessionInput/operationFinished(attempt:_:)``.
    private mutating func start(_ op: GattOperation, _ s: inout Step) {
        let attempt = generation
        switch op {
        case .setupDone(let onlyNew):
            setupDone(onlyNew: onlyNew, &s)
        case .subscribe(let mc):
            queue.inFlight = .operation
            // Indications need confirmations, which only StartNotify gives.
            let acquire = mc.properties.contains(.notify) && configuration.acquireNotify
            s.emit(.subscribe(mc, acquire: acquire, attempt: attempt))
        case .read(let mc, let initial):
            if unreadable.contains(mc.uuid.uuidString) { return }
            queue.inFlight = .operation
            s.emit(.read(mc, initial: initial, attempt: attempt))
        case .readDescriptor(let mc, let kind, let path):
            queue.inFlight = .operation
            s.emit(.readDescriptor(mc, kind, path: path, attempt: attempt))
        case .command(let command):
            execute(command, attempt: attempt, &s)
        case .pair:
            pair(for: nil, attempt: attempt, &s)
        case .profileSteps:
            startRun(.connection, &s)
        }
    }

    /// A GATT operation finished.
    /// `answered`: the command in flight was answered at its deadline already.
    package mutating func finished(_ outcome: GattOutcome, attempt: Int, answeredAtDeadline answered: Bool, _ s: inout Step) {
        // A profile run's calls (a subscribe step's subscription of this connection included) go to the run.
        if case .profileCall = outcome { return profileOutcome(outcome, attempt: attempt, &s) }
        if case .subscribed = outcome, attempt == generation, case .call? = queue.run?.waiting {
            return profileOutcome(outcome, attempt: attempt, &s)
        }
        switch outcome {
        case .command(let command, let result, let readValue, let refusal):
            // Answered at its deadline already: BlueZ's late reply is not answered again (nor
            // paired for: the command cannot be sent again).
            if let refusal, !answered, attempt == generation, mayPair(after: refusal, s) {
                return pair(for: .command(command), attempt: attempt, &s)
            }
            // Answered whatever happened to the link meanwhile: it was sent.
            if let readValue { s.emit(.publishRead(path: readValue.path, value: readValue.value)) }
            if !answered {
                s.emit(.respond(command, result))
            } else {
                // Its result said timeout: the log says when BlueZ did answer (a slow peripheral, a busy bluetoothd).
                s.log(.notice, "BlueZ answered the \(command.operation == .set ? "write" : "read") of \(command.service)/\(command.characteristic) on \(device.segment) \(command.deadline.duration(to: s.now)) after the command's deadline; its result said timeout")
            }
        case .descriptor(let mc, let kind, let result):
            descriptorRead(mc, kind, result, attempt: attempt, &s)
        case .profileCall:
            break  // the run's, above
        case .subscribed(let mc, let error, let viaSocket):
            // The link dropped with a refusal (5.66 drops it before the reply; the reply may be stale, or come before
            // the core saw the drop): BlueZ's own pairing for the CCC write failed.
            let dropped = attempt != generation || !(s.view?.servicesResolved ?? false)
            // Not remembered as a read is: `pairing: none` waits the delay too (even after it gave up pairing).
            if dropped, let error, Self.isSecurityRefusal(error, linkDropped: true), pairingAllowed, !bondedNow(s) {
                pairingFailed(error, "BlueZ's own, for the subscription to \(mc.key.service)/\(mc.key.characteristic)", attempt: attempt, &s)
                if attempt == generation { return }
            }
            guard attempt == generation else {
                // A socket of an earlier connection: closed, so BlueZ stops it. A StartNotify of an earlier
                // connection that BlueZ took: stopped, or bluetoothd keeps the session for the next connection (and
                // refuses AcquireNotify there with InProgress).
                if viaSocket {
                    s.emit(.releaseNotify(characteristic: mc.path))
                } else if error == nil {
                    s.emit(.shutDown(stopNotify: [mc.path], disconnect: false))
                }
                return stale("StartNotify \(mc.path)", &s)
            }
            if viaSocket { link?.acquired[mc.path] = mc }
            if let error, Self.isSecurityRefusal(error, linkDropped: false), mayPair(after: error, s) {
                return pair(for: .subscribe(mc), attempt: attempt, &s)
            }
            if let error {
                // Generic Attribute's Service Changed and similar may refuse; go on with the rest.
                s.log(.warning, "StartNotify \(mc.key.service)/\(mc.key.characteristic) failed: \(error)")
                link?.setup.subscribeFailures += 1
            } else {
                link?.notifying.append(mc.path)
            }
        case .read(let mc, let initial, let result, let linkDropped):
            if case .failure(let error) = result, Self.isSecurityRefusal(error, linkDropped: linkDropped) {
                // Bonded already: pairing cannot give what the read asks for (real 5.66 pairs Just Works on its own).
                if bondedNow(s) { return refusedDespiteBond(mc, error, &s) }
                if !linkDropped, attempt == generation, mayPair(after: error, s) {
                    return pair(for: .read(mc, initial: initial), attempt: attempt, &s)
                }
                // Real 5.66 tries to pair on its own and drops the link when that fails: the bridge pairs first on the
                // next connection. A device configured to pair: a failed pairing, the next connection after the delay.
                // `pairing: none`: no delay; one Pair, and after its failure never again (``givenUp``), the read
                // remembered.
                if linkDropped, pairingAllowed, pairingFailure == nil, !givenUp, pairingMode != .none || !pairOnConnect {
                    if !pairOnConnect {
                        pairOnConnect = true
                        pairing.onConnectFor = mc
                        s.log(.notice, "ReadValue \(mc.key.service)/\(mc.key.characteristic) refused (\(error)) and the link dropped: pairing first on the next connection")
                    }
                    guard pairingMode != .none else { return }
                    return pairingFailed(error, "BlueZ's own, for ReadValue \(mc.key.service)/\(mc.key.characteristic)", attempt: attempt, &s)
                }
                // A device configured to pair (just_works, passkey) is tried again on its next connection.
                guard pairingMode == .none else {
                    s.log(.warning, "ReadValue \(mc.key.service)/\(mc.key.characteristic) refused (\(error)); pairing did not help on this connection")
                    return
                }
                // Reading it makes BlueZ try to pair (and, with no agent, drop the link), and pairing did not help:
                // never again, whichever connection the read belonged to (the drop makes it stale).
                if unreadable.insert(mc.uuid.uuidString).inserted {
                    s.emit(.report(.unreadable(uuid: mc.uuid.uuidString)))
                    s.log(.warning, "ReadValue \(mc.key.service)/\(mc.key.characteristic) refused (\(error)): it needs pairing; not reading it again")
                }
                return
            }
            guard attempt == generation else { return stale("ReadValue \(mc.path)", &s) }
            switch result {
            case .success(let value):
                s.emit(.publishRead(path: mc.path, value: value))
                // Device Information strings name the device in Home Assistant; the mapping
                // report at the end of setup carries them, a later change is reported again.
                if information.record(mc.uuid, bytes: value) && !(link?.setup.running ?? false) { reportMapping(&s) }
            case .failure(let error):
                s.log(.warning, "\(initial ? "ReadValue" : "poll") \(mc.key.service)/\(mc.key.characteristic) failed: \(error)")
            }
        }
    }

    private mutating func stale(_ what: String, _ s: inout Step) {
        s.log(.debug, "\(what): completion of an earlier connection dropped")
    }

    /// Whether a failed read means the characteristic needs pairing. `linkDropped`: the device's
    /// services were no longer resolved when the error came.
    package static func isSecurityRefusal(_ error: BluetoothError, linkDropped: Bool) -> Bool {
        if error.code == .notAuthorized || error.code == .authenticationFailed { return true }
        let m = error.message.lowercased()
        // ATT: 0x05 insufficient authentication, 0x08 authorization, 0x0c key size, 0x0f insufficient
        // encryption. 0x0e "unlikely error" is what 5.66 reports after a failed pairing, but a
        // device may send it for anything: it counts only when the link went down with it.
        for code in ["0x05", "0x08", "0x0c", "0x0f"] where m.includes("att error: \(code)") { return true }
        if linkDropped && m.includes("att error: 0x0e") { return true }
        return m.includes("authentication") || m.includes("encryption")
    }

    /// An `AcquireNotify` socket hung up. With the link going down that is all; if the link is
    /// still up a second later, BlueZ ended the notifications on its own: subscribe again.
    package mutating func notificationsReleased(_ characteristic: String, _ s: inout Step) {
        guard let mc = link?.acquired[characteristic] else { return }
        link?.acquired[characteristic] = nil
        link?.notifying.removeAll { $0 == characteristic }
        guard machine.isReady, !ended else { return }
        s.log(.debug, "notification socket of \(mc.key.service)/\(mc.key.characteristic) hung up")
        link?.resubscribe.append(mc)
        link?.resubscribeAt = s.now.advanced(by: .seconds(1))
    }

    /// Queues the subscriptions whose sockets hung up while the link stayed up.
    package mutating func resubscribeReleased(_ s: inout Step) {
        guard let link else { return }
        self.link?.resubscribe.removeAll()
        guard machine.isReady, !ended else { return }
        for mc in link.resubscribe where link.mappedPaths.contains(mc.path) && !link.notifying.contains(mc.path) {
            s.log(.notice, "notifications of \(mc.key.service)/\(mc.key.characteristic) ended while connected: subscribing again")
            queue.work.append(.subscribe(mc))
        }
    }
}
