import BridgeCore

/// Pairing in the GATT queue (SPEC §11): an operation refused for lack of encryption or authentication makes the
/// session pair the device (`Device1.Pair`, then `Trusted`: the executor runs both as one step) and run the
/// operation once more. A second refusal after a pairing fails the operation (a command gets `gatt_error` with
/// BlueZ's error). A device with `pairing: none` that BlueZ cannot pair keeps the "never read it again" memory for
/// its refused reads.
///
/// A failed pairing of a device configured to pair (`just_works`, `passkey`: the bridge's `Pair`, or BlueZ's own
/// when a request needed encryption: the link dropped with the refusal) is not hammered (a lock may lock itself after
/// a few wrong codes): nothing more is sent on that connection, the link goes, the agent refuses the device, and the
/// next connection waits ``PairingRetry``'s delay (30 s doubling to 10 min; a success or a reconnect request starts
/// it over). One warning per failed attempt. `pairing: none` is never paired again after one failure (``givenUp``)
/// and its refused reads are remembered, so only a subscription refused with the link dropped (BlueZ pairs for its
/// CCC write on every connection) waits the delay there.
extension SessionCore {
    /// What a session remembers of pairing across its links (the pairing in flight and the outcome of this link's
    /// are the link's: ``SessionLink/pairing``, ``SessionLink/paired``, ``SessionLink/pairingFailure``).
    package struct PairingState: Sendable {
        /// Pair before the setup of the next connection (the last one dropped with a refusal).
        package var onConnect = false
        /// The read whose refusal (and dropped link) asked for ``onConnect``.
        package var onConnectFor: MappedCharacteristic?
        /// A pairing of this session failed (kept across connections): a device with `pairing: none` is not
        /// paired again (BlueZ cannot pair it), or every connection would pair, read, be dropped and start over.
        package var everFailed = false
        /// BlueZ showed the device paired during this session (kept across connections: ``noteBond()``).
        package var bondSeen = false
        /// The connection attempt of the bridge's last `Pair` not answered yet (kept across connections: real 5.66
        /// drops the link before it answers a failed `Pair`, and that failure still counts).
        package var pairAttempt: Int?
        /// The connection attempt whose failed pairing was counted (once per attempt).
        package var failureCountedFor: Int?
    }

    /// How long `Pair` may take (a passkey typed by the agent at once; a peripheral that never answers).
    package static var pairTimeout: Duration { .seconds(30) }

    /// The configured pairing of the device (`none` when not configured).
    package var pairingMode: BridgeConfig.Device.Pairing { device.config?.pairing ?? .none }

    /// Whether the bridge pairs this device when an operation needs it: a configured device (a `devices` entry;
    /// `pairing: none` pairs Just Works then). A device the bridge found by its services only is never bonded
    /// (nor trusted) by the bridge: its refused characteristics are remembered as before.
    package var pairingAllowed: Bool { device.config != nil }

    /// This link's pairing failed, with this error (nil without a link).
    package var pairingFailure: BluetoothError? { link?.pairingFailure }

    /// A pairing of the bridge is in flight on this link.
    package var pairingRunning: Bool { link?.pairing != nil }

    /// This link paired (successfully).
    package var pairedOnLink: Bool { link?.paired ?? false }

    package var pairOnConnect: Bool {
        get { pairing.onConnect }
        set { pairing.onConnect = newValue }
    }

    /// Whether a refusal (`error`) should lead to a pairing now. Not when BlueZ has a bond already: the refusal asks
    /// for more than it gives (an authenticated or Secure Connections key: Just Works cannot), and 5.66 answers `Pair`
    /// on an LE-bonded device with `AuthenticationFailed` (it tries BR/EDR).
    package func mayPair(after error: BluetoothError, _ s: Step) -> Bool {
        pairingAllowed && !pairingRunning && !pairedOnLink && pairingFailure == nil && !givenUp
            && !bondedNow(s) && !pairingRetry.holds(at: s.now)
    }

    /// BlueZ shows the device paired (or bonded) now, and no pairing of the bridge is in flight.
    package func bondedNow(_ s: Step) -> Bool { s.view?.paired == true && !pairingRunning }

    /// A read refused although the device is bonded: pairing again cannot help (on real 5.66 the read even drops the
    /// link each time, so every connection would be dropped). Not read again: remembered in the state file with
    /// `pairing: none` as before, for this session only for a device configured to pair (its configuration may ask
    /// for a passkey, an authenticated bond, next time).
    package mutating func refusedDespiteBond(_ mc: MappedCharacteristic, _ error: BluetoothError, _ s: inout Step) {
        guard unreadable.insert(mc.uuid.uuidString).inserted else { return }
        if pairingMode == .none { s.emit(.report(.unreadable(uuid: mc.uuid.uuidString))) }
        s.log(.warning, "ReadValue \(mc.key.service)/\(mc.key.characteristic) refused (\(error)) although \(device.address) is bonded: it needs more security than the bond gives (authenticated pairing?); not reading it again\(pairingMode == .none ? "" : " while the bridge runs")")
    }

    /// The first time in a session that BlueZ shows a configured device paired without the bridge's `Pair` (5.66
    /// pairs on its own, Just Works through the default agent, when a read needs encryption; or a bond from
    /// before): logged, reported (`bridge/devices`) and trusted, as after the bridge's own pairing.
    package mutating func noteBond(_ s: inout Step) {
        guard pairingAllowed, s.view?.paired == true, !pairing.bondSeen else { return }
        pairing.bondSeen = true
        guard !pairingRunning, !pairedOnLink else { return }
        s.log(.notice, "\(device.address): paired and bonded in BlueZ (without the bridge's Pair: BlueZ paired it when a read needed encryption, or a bond from before); trusting it")
        s.emit(.trust)
        s.emit(.report(.paired))
        resetPairingRetry(because: "it is paired", &s)
    }

    /// A device with `pairing: none` whose pairing failed once: BlueZ cannot pair it (configured devices are tried
    /// again on each connection, as SPEC §11 says).
    package var givenUp: Bool { pairingMode == .none && pairing.everFailed }

    /// Starts the pairing; `op` runs again after it (nil: the setup goes on).
    package mutating func pair(for op: GattOperation?, attempt: Int, _ s: inout Step) {
        link?.pairing = SessionLink.PairingRun(retry: op)
        pairing.pairAttempt = attempt
        queue.inFlight = .pairing
        s.log(.notice, "\(device.address): \(op.map { "\(Self.describe($0)) was refused for lack of pairing" } ?? "the last connection needed pairing"): pairing (\(pairingMode.rawValue))")
        s.emit(.pair(attempt: attempt, timeout: Self.pairTimeout))
    }

    /// `Pair` (and `Trusted`) returned. A failure counts even when the link dropped before the reply (real 5.66 and
    /// bluez-sim drop it first).
    package mutating func pairFinished(attempt: Int, error: BluetoothError?, _ s: inout Step) {
        // The run of this link (a stale reply's link is gone, and its run with it).
        let run = attempt == generation ? link?.pairing : nil
        let current = run != nil
        let failed = error.map { $0.code != .alreadyExists } ?? false
        guard current || (failed && attempt == pairing.pairAttempt) else {
            s.log(.debug, "dropping the reply of an earlier pairing (\(attempt), now \(generation))")
            return
        }
        pairing.pairAttempt = nil
        if current {
            link?.pairing = nil
            queue.inFlight = nil
        }
        pairing.onConnect = false
        let retry = run?.retry
        // A pairing before the setup stands for the read whose refusal asked for it.
        let refusedRead = pairing.onConnectFor
        pairing.onConnectFor = nil
        // AlreadyExists: bonded already (the refusal was not for lack of a bond): as a success, the retry decides.
        if let error, failed {
            // This link's (a stale reply's link is over: the next one starts clean).
            if current { link?.pairingFailure = error }
            pairing.everFailed = true
            if let op = retry ?? refusedRead.map({ .read($0, initial: true) }) { failAfterPairing(op, error, &s) }
            guard pairingMode != .none else {
                // Never paired again in this session (``givenUp``), its refused reads remembered: no delay needed.
                s.log(.warning, "\(device.address): pairing failed: \(error); not pairing it again (pairing: none)")
                return
            }
            return pairingFailed(error, "Pair", attempt: attempt, &s)
        }
        link?.paired = true
        s.log(.notice, "\(device.address): paired and bonded\(retry.map { "; \(Self.describe($0)) again" } ?? "")")
        s.emit(.report(.paired))
        resetPairingRetry(because: "it paired", &s)
        guard let op = retry else { return }
        switch op {
        case .command(let command): execute(command, attempt: generation, &s)
        case .read, .subscribe, .readDescriptor, .setupDone, .pair, .profileSteps:
            // First in line: the queue runs it next.
            if link?.setup.running == true { link?.setup.operations.insert(op, at: 0) } else { queue.work.insert(op, at: 0) }
        }
    }

    /// A pairing of the device failed on connection attempt `attempt` (`what`: whose pairing): counted once per
    /// attempt. Nothing protected is sent on this connection any more (its setup and queued reads go; commands wait
    /// for the next connection or their deadline), the link goes, and the next connection waits the retry delay.
    package mutating func pairingFailed(_ error: BluetoothError, _ what: String, attempt: Int, _ s: inout Step) {
        guard pairing.failureCountedFor != attempt else { return }
        pairing.failureCountedFor = attempt
        let at = pairingRetry.failed(at: s.now)
        s.emit(.pairingRetry(pairingRetry))
        s.log(.warning, "\(device.address): pairing failed (\(what)): \(error)\(pairingMode == .passkey ? " (is the passkey right?)" : ""); failed pairing \(pairingRetry.failures): nothing more on this connection, the agent refuses the device until the next attempt in \(s.now.duration(to: at)) (the delay doubles up to 10 min; bridge/request/reconnect tries at once)")
        link?.setup.operations.removeAll()
        queue.work.removeAll { if case .command = $0 { false } else { true } }
        if isPoll {
            cycle.nextAt = max(cycle.nextAt ?? at, at)
            cycle.phase = .waiting
            setAvailable(false, &s)
            feed(.releaseRequested, &s)
        } else {
            feed(.holdOff(until: at), &s)
        }
    }

    /// A success or a reconnect request: a failed pairing's delay is over, the next failure waits the first delay.
    package mutating func resetPairingRetry(because why: String, _ s: inout Step) {
        guard pairingRetry.failures > 0 else { return }
        let held = pairingRetry.holds(at: s.now)
        pairingRetry.reset()
        s.emit(.pairingRetry(pairingRetry))
        s.log(.notice, "\(device.address): \(why): the delay after failed pairings starts over\(held ? "; connecting now" : "")")
        if isPoll {
            if held { cycle.nextAt = s.now }
        } else if machine.heldUntil != nil {
            // Lifts the machine's hold (a backoff ends now; a disconnect under way is followed by the usual delay).
            feed(.connectRequested, &s)
        }
    }

    /// The operation that waited for a pairing that failed.
    private mutating func failAfterPairing(_ op: GattOperation, _ error: BluetoothError, _ s: inout Step) {
        switch op {
        case .command(let command):
            let transaction = command.transaction
            s.emit(.respond(command, .failed(
                CommandResult.Operation(command.operation), error: .gattError(name: error.name, message: "pairing failed: \(error.message)"),
                transaction: transaction)))
        case .read(let mc, _):
            // pairing: none and BlueZ cannot pair it: never read it again (as before pairing existed).
            if pairingMode == .none, unreadable.insert(mc.uuid.uuidString).inserted {
                s.emit(.report(.unreadable(uuid: mc.uuid.uuidString)))
                s.log(.warning, "ReadValue \(mc.key.service)/\(mc.key.characteristic) was refused and needs pairing, which failed: not reading it again")
            }
        case .subscribe(let mc):
            s.log(.warning, "StartNotify \(mc.key.service)/\(mc.key.characteristic) needs pairing, which failed")
            link?.setup.subscribeFailures += 1
        case .readDescriptor, .setupDone, .pair, .profileSteps:
            break
        }
    }

    package static func describe(_ op: GattOperation) -> String {
        switch op {
        case .read(let mc, _): "ReadValue \(mc.key.service)/\(mc.key.characteristic)"
        case .subscribe(let mc): "StartNotify \(mc.key.service)/\(mc.key.characteristic)"
        case .command(let c): "\(c.operation == .set ? "/set" : "/get") \(c.service)/\(c.characteristic)"
        case .readDescriptor(let mc, _, _): "ReadValue of a descriptor of \(mc.key.service)/\(mc.key.characteristic)"
        case .setupDone: "setup"
        case .pair: "Pair"
        case .profileSteps: "the profile's connection steps"
        }
    }
}
