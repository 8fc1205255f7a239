import BridgeBase
import DBusKit

/// A pairing in progress on one device. Confined to the ``Simulator`` actor.
final class PairingAttempt {
    let id: UInt64
    /// Started by `Device1.Pair` (bluetoothd's `device->bonding`); false: a GATT request's security
    /// elevation.
    let viaPair: Bool
    /// The agent that answers (nil: none, the pairing fails).
    let agent: RegisteredAgent?
    /// The IO capability the central pairs with.
    let io: IOCapability
    /// The security the request needs.
    let required: SecurityLevel
    var task: Task<Result<Void, DBusError>, Never>?
    /// The agent call waiting for an answer.
    var agentCall: Task<Result<[DBusValue], DBusError>, Never>?
    /// `CancelPairing` was called.
    var canceled = false

    init(id: UInt64, viaPair: Bool, agent: RegisteredAgent?, io: IOCapability, required: SecurityLevel) {
        self.id = id
        self.viaPair = viaPair
        self.agent = agent
        self.io = io
        self.required = required
    }
}

/// Pairing as bluetoothd 5.66 and the Linux kernel's SMP run it for an LE peripheral (see
/// scripts/sim/README.md, "Pairing"): `Device1.Pair`, `CancelPairing`, and the security elevation of
/// a GATT request refused for insufficient encryption or authentication.
extension Simulator {
    static let agentInterface = "org.bluez.Agent1"

    /// `Device1.Pair` from `sender`: connects first when needed, pairs with the sender's agent (else
    /// the default agent; the IO capability is that agent's, NoInputNoOutput without one), and
    /// replies once services are resolved.
    func pair(device path: String, sender: String) async throws(DBusError) {
        let d = try device(path)
        d.temporary = false
        if let running = pairings[path] {
            if running.viaPair { throw BluezError.inProgress }
            // A security elevation runs: its result is this Pair's.
            _ = await running.task?.value
            if d.paired { return }
        }
        if d.paired { throw BluezError.alreadyExists }
        if d.connection != .connected { _ = try await establishLink(d, viaConnectDevice: false) }
        let agent = agent(for: sender)
        let result = await runPairing(d, viaPair: true, agent: agent, io: agent?.capability ?? .noInputNoOutput,
                                      required: .encrypted)
        try result.get()
        if d.connection == .connected && !d.servicesResolved {
            let generation = d.linkGeneration
            await waitForServices(d)
            guard d.linkGeneration == generation else { throw BluezError.authenticationCanceled }
        }
    }

    /// `Device1.CancelPairing`: a running `Pair` fails with `AuthenticationCanceled` (the agent gets
    /// `Cancel`). Without one, `DoesNotExist`; bluetoothd 5.66 then also asks the kernel to remove
    /// the keys (`MGMT_OP_UNPAIR_DEVICE` with disconnect), which drops the link of a paired device.
    func cancelPairing(device path: String) throws(DBusError) {
        let d = try device(path)
        guard let attempt = pairings[path], attempt.viaPair else {
            if d.paired && d.connection == .connected {
                logger.info("CancelPairing without a pairing: the kernel's keys go, the link drops",
                            metadata: ["address": "\(d.spec.address)"])
                linkLost(d, pendingError: BluezError.failed("Not connected"))
            }
            throw BluezError.doesNotExist
        }
        attempt.canceled = true
        attempt.agentCall?.cancel()
    }

    /// Raises the link's security for `operation` on `c` when the bond does not give what it needs:
    /// bluetoothd retries the refused request after pairing (`bt_att` `change_security`). With no
    /// default agent the pairing fails as it always did here (``pairingFails(_:_:)``); otherwise the
    /// default agent is asked. A failed pairing drops the link; the request fails with
    /// `Failed "Operation failed with ATT error: 0x0e"`.
    func secureLink(_ d: SimulatedDevice, _ c: SimCharacteristic, operation: String) async throws(DBusError) {
        let need = c.requiredSecurity(for: operation)
        guard need > d.bondLevel else { return }
        if let running = pairings[d.path] {
            let generation = d.linkGeneration
            _ = await running.task?.value
            guard d.linkGeneration == generation, d.connection == .connected else { throw d.linkLossError }
            if need <= d.bondLevel { return }
            throw BluezError.att(need == .authenticated ? 0x05 : 0x0f)
        }
        guard let agent = defaultAgent else { try await pairingFails(d, c) }
        logger.info("security elevation: pairing", metadata: [
            "address": "\(d.spec.address)", "uuid": "\(c.uuid)", "needs": "\(need)",
        ])
        let result = await runPairing(d, viaPair: false, agent: agent, io: agent.capability, required: need)
        guard case .success = result else { throw BluezError.att(0x0e) }
    }

    /// Runs one pairing as an attempt others can join; its result.
    func runPairing(_ d: SimulatedDevice, viaPair: Bool, agent: RegisteredAgent?, io: IOCapability,
                    required: SecurityLevel) async -> Result<Void, DBusError> {
        nextWaiterID &+= 1
        let attempt = PairingAttempt(id: nextWaiterID, viaPair: viaPair, agent: agent, io: io, required: required)
        pairings[d.path] = attempt
        d.stats.pairingAttempts &+= 1
        let path = d.path
        let id = attempt.id
        let task = Task<Result<Void, DBusError>, Never> { [weak self] in
            guard let self else { return .failure(BluezError.authenticationCanceled) }
            return await self.performPairing(device: path, attempt: id)
        }
        attempt.task = task
        let result = await task.value
        if pairings[path]?.id == id { pairings[path] = nil }
        return result
    }

    /// The SMP exchange and the agent's part in it.
    func performPairing(device path: String, attempt id: UInt64) async -> Result<Void, DBusError> {
        guard let d = devices[path], let attempt = pairings[path], attempt.id == id else {
            return .failure(BluezError.authenticationCanceled)
        }
        let generation = d.linkGeneration
        let started = clock.now
        func fail(_ error: DBusError, _ reason: String, _ drop: Bool) async -> Result<Void, DBusError> {
            await pairingFailed(d, attempt, generation: generation, started: started, error: error,
                                reason: reason, dropLink: drop)
        }
        // Pairing Request / Response.
        await waitForPeripheral(device: path, .milliseconds(20))
        guard d.linkGeneration == generation, d.connection == .connected else {
            return await fail(BluezError.authenticationCanceled, "the link dropped", false)
        }
        let peripheral = d.spec.pairing
        if peripheral == .refuse {
            return await fail(BluezError.authenticationFailed, "the peripheral refuses pairing (Pairing Not Supported)", true)
        }
        let localMITM = attempt.io != .noInputNoOutput || attempt.required == .authenticated
        let method = PairingMethod.select(local: attempt.io, remote: peripheral.ioCapability, localMITM: localMITM,
                                          remoteMITM: peripheral.requiresMITM)
        if !method.authenticated && (attempt.required == .authenticated || peripheral.requiresMITM) {
            return await fail(BluezError.authenticationFailed,
                              "an authenticated key is needed but the IO capabilities give Just Works (Authentication Requirements)", true)
        }
        // bluetoothd's new_auth: the Pair's agent, else the default one.
        guard let agent = attempt.agent ?? defaultAgent else {
            let type = method == .passkeyEntry ? 1 : method == .passkeyDisplay ? 3 : 2
            return await fail(BluezError.authenticationFailed, "No agent available for request type \(type)", true)
        }
        let device = DBusValue.objectPath(d.path)
        let expected: UInt32
        if case .passkey(let p) = peripheral { expected = p } else { expected = 123_456 }
        var call: (String, [DBusValue])?
        switch method {
        case .justWorks:
            // Linux asks with confirm_hint set; bluetoothd accepts at once for a Pair (the user asked).
            if !attempt.viaPair { call = ("RequestAuthorization", [device]) }
        case .passkeyEntry:
            call = ("RequestPasskey", [device])
        case .numericComparison:
            call = ("RequestConfirmation", [device, .uint32(expected)])
        case .passkeyDisplay:
            sendToAgent(agent, "DisplayPasskey", [device, .uint32(expected), .uint16(0)])
        }
        if let (member, arguments) = call {
            logger.info("asking the agent", metadata: [
                "address": "\(d.spec.address)", "method": "\(member)", "agent": "\(agent.owner)\(agent.path)",
            ])
            let reply = await callAgent(agent, member, arguments, attempt)
            if attempt.canceled {
                sendToAgent(agent, "Cancel", [])
                return await fail(BluezError.authenticationCanceled, "CancelPairing", false)
            }
            guard d.linkGeneration == generation, d.connection == .connected else {
                sendToAgent(agent, "Cancel", [])
                return await fail(BluezError.authenticationCanceled, "the link dropped", false)
            }
            switch reply {
            case .failure(let e) where e.name == DBusError.Name.noReply || e.name == DBusError.Name.timeout:
                // The kernel's SMP timeout: it disconnects, the pairing completes as "disconnected".
                sendToAgent(agent, "Cancel", [])
                return await fail(BluezError.authenticationCanceled, "the agent did not answer (SMP timeout)", true)
            case .failure(let e):
                return await fail(BluezError.authenticationFailed, "Agent replied with an error: \(e.name), \(e.message)", true)
            case .success(let values):
                if member == "RequestPasskey" {
                    guard values.count == 1, case .uint32(let entered) = values[0] else {
                        return await fail(BluezError.authenticationFailed, "Wrong passkey reply signature", true)
                    }
                    guard entered == expected else {
                        return await fail(BluezError.authenticationFailed, "wrong passkey \(entered) (Confirm Value Failed)", true)
                    }
                }
            }
        }
        // Key distribution, encryption.
        await waitForPeripheral(device: path, .milliseconds(20))
        guard d.linkGeneration == generation, d.connection == .connected, !attempt.canceled else {
            return await fail(BluezError.authenticationCanceled, attempt.canceled ? "CancelPairing" : "the link dropped", false)
        }
        bonded(d, authenticated: method.authenticated)
        logger.info("paired", metadata: [
            "address": "\(d.spec.address)", "method": "\(method)", "via": "\(attempt.viaPair ? "Pair" : "security elevation")",
        ])
        return .success(())
    }

    /// The bond is stored: `Bonded` is signalled (New LTK), then `Paired` (bonding complete; held
    /// back until services are resolved, bluetoothd's `pending_paired`).
    func bonded(_ d: SimulatedDevice, authenticated: Bool) {
        let wasPaired = d.paired
        d.paired = true
        d.bondAuthenticated = d.bondAuthenticated || authenticated
        d.peripheralForgotBond = false
        d.temporary = false
        d.stats.pairings &+= 1
        if !wasPaired {
            server.setProperties(path: d.path, interface: BlueZNames.device, ["Bonded": .bool(true)])
            if d.servicesResolved {
                server.setProperties(path: d.path, interface: BlueZNames.device, ["Paired": .bool(true)])
            } else {
                server.setProperties(path: d.path, interface: BlueZNames.device, ["Paired": .bool(true)], emit: false)
                d.pendingPaired = true
            }
        }
        persistKnownDevices()
    }

    /// A failed pairing: logged; the link drops (as 5.66 did after a failed security elevation)
    /// no sooner than ``ScenarioSettings/pairingFailureDelay`` after the start; a device that is
    /// neither paired nor trusted becomes temporary again (`device_bonding_complete`).
    func pairingFailed(_ d: SimulatedDevice, _ attempt: PairingAttempt, generation: UInt64, started: ContinuousClock.Instant,
                       error: DBusError, reason: String, dropLink: Bool) async -> Result<Void, DBusError> {
        d.stats.pairingFailures &+= 1
        logger.info("pairing failed", metadata: ["address": "\(d.spec.address)", "reason": "\(reason)", "error": "\(error)"])
        if dropLink && d.linkGeneration == generation && d.connection == .connected {
            let remaining = started + settings.pairingFailureDelay - clock.now
            if remaining > .zero { await waitForPeripheral(device: d.path, remaining) }
            if d.linkGeneration == generation && d.connection == .connected {
                linkLost(d, pendingError: BluezError.failed("Not connected"))
            }
        }
        let trusted = server.property(path: d.path, interface: BlueZNames.device, name: "Trusted") == .bool(true)
        if attempt.viaPair && !d.paired && !trusted { d.temporary = true }
        return .failure(error)
    }

    /// Calls the agent and waits for its answer (at most ``ScenarioSettings/pairingTimeout``);
    /// `CancelPairing` and link losses cancel the wait.
    func callAgent(_ agent: RegisteredAgent, _ member: String, _ arguments: [DBusValue],
                   _ attempt: PairingAttempt) async -> Result<[DBusValue], DBusError> {
        let connection = server.connection
        let timeout = settings.pairingTimeout
        let task = Task<Result<[DBusValue], DBusError>, Never> {
            do throws(DBusError) {
                return .success(try await connection.call(destination: agent.owner, path: agent.path,
                                                          interface: Self.agentInterface, method: member,
                                                          arguments: arguments, timeout: timeout))
            } catch {
                return .failure(error)
            }
        }
        attempt.agentCall = task
        let result = await task.value
        attempt.agentCall = nil
        return result
    }

    /// A call to the agent whose answer nobody waits for (`Cancel`, `DisplayPasskey`).
    func sendToAgent(_ agent: RegisteredAgent, _ member: String, _ arguments: [DBusValue]) {
        let connection = server.connection
        Task {
            _ = try? await connection.call(destination: agent.owner, path: agent.path, interface: Self.agentInterface,
                                           method: member, arguments: arguments, timeout: .seconds(5))
        }
    }

    /// The link of `d` is gone: a pairing waiting for its agent stops waiting.
    func pairingLinkLost(_ d: SimulatedDevice) {
        pairings[d.path]?.agentCall?.cancel()
    }
}
