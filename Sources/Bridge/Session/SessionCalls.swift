import BlueZ
import BridgeCore
import RuntimeCore
import Logging

/// The BlueZ calls of a session's GATT queue, run by ``PeripheralSession`` as child tasks: each
/// turns the reply into the ``GattOutcome`` the core is handed.
enum SessionCalls {
    /// `AcquireNotify` (when `acquire`; `StartNotify` when refused) or `StartNotify`.
    static func subscribe(
        _ central: any BluetoothCentral, _ mc: MappedCharacteristic, acquire: Bool, logger: Logger
    ) async -> GattOutcome {
        if acquire {
            do throws(BlueZError) {
                let mtu = try await central.acquireNotify(characteristic: mc.path)
                logger.debug("AcquireNotify \(mc.key.service)/\(mc.key.characteristic): notifications over a socket (MTU \(mtu))")
                return .subscribed(mc, error: nil, acquired: true)
            } catch {
                // The link is gone (BlueZ answers "Not connected"): a StartNotify now would register a notify session
                // that bluetoothd keeps for the next connection (which then refuses AcquireNotify with InProgress).
                if error.code == .notConnected || error.message.lowercased().includes("not connected") {
                    return .subscribed(mc, error: BluetoothError(error), acquired: false)
                }
                // Refused for lack of pairing (BlueZ paired on its own, or failed to): StartNotify would only make BlueZ
                // pair once more for the same CCC write (SPEC §11); the core decides (pair, or count a failed pairing).
                if SessionCore.isSecurityRefusal(BluetoothError(error), linkDropped: true) {
                    return .subscribed(mc, error: BluetoothError(error), acquired: false)
                }
                logger.debug("AcquireNotify \(mc.key.service)/\(mc.key.characteristic) refused (\(error)): StartNotify instead")
            }
        }
        do throws(BlueZError) {
            try await central.startNotify(characteristic: mc.path)
            return .subscribed(mc, error: nil, acquired: false)
        } catch {
            return .subscribed(mc, error: BluetoothError(error), acquired: false)
        }
    }

    /// A setup or poll `ReadValue`.
    static func read(
        _ central: any BluetoothCentral, _ mc: MappedCharacteristic, initial: Bool, device: String
    ) async -> GattOutcome {
        do throws(BlueZError) {
            let value = try await central.readValue(characteristic: mc.path, timeout: nil)
            return .read(mc, initial: initial, .success(value), linkDropped: false)
        } catch {
            // 5.66 drops the link after a failed pairing and signals that before the error reply.
            let dropped = !(central.device(device)?.servicesResolved ?? false)
            return .read(mc, initial: initial, .failure(BluetoothError(error)), linkDropped: dropped)
        }
    }

    /// A descriptor's `ReadValue`.
    static func readDescriptor(
        _ central: any BluetoothCentral, _ mc: MappedCharacteristic, _ kind: DescriptorKind, path: String
    ) async -> GattOutcome {
        do throws(BlueZError) {
            return .descriptor(mc, kind, .success(try await central.readDescriptor(path, timeout: nil)))
        } catch {
            return .descriptor(mc, kind, .failure(BluetoothError(error)))
        }
    }

    /// A command's `WriteValue` or `ReadValue`, with only the time left before its deadline.
    static func run(_ central: any BluetoothCentral, _ job: SessionCore.CommandJob) async -> GattOutcome {
        if job.command.operation == .set {
            do {
                try await central.writeValue(
                    characteristic: job.path, value: job.bytes, type: job.type,
                    timeout: job.timeout)
                return .command(job.command, .writeSucceeded(response: job.type.withResponse, transaction: job.transaction), readValue: nil)
            } catch {
                return .command(
                    job.command, .failed(.write, error: map(error), transaction: job.transaction, response: job.type.withResponse),
                    readValue: nil, refusal: Self.refusal(error))
            }
        }
        do {
            let value = try await central.readValue(characteristic: job.path, timeout: job.timeout)
            let decoded = job.presentation?.decodeIfValid(value) ?? job.format.decode(value)
            let result = CommandResult.readSucceeded(raw: value, value: decoded, transaction: job.transaction)
            return .command(job.command, result, readValue: ReadValue(path: job.path, value: value))
        } catch {
            return .command(
                job.command, .failed(.read, error: map(error), transaction: job.transaction), readValue: nil,
                refusal: Self.refusal(error))
        }
    }

    /// A profile step's `WriteValue` (bytes given) or `ReadValue`, with the time left before the run's deadline.
    /// Pairing for profile steps is not done: a refusal for lack of it is a `gatt_error` that says so.
    static func profileCall(_ central: any BluetoothCentral, _ call: SessionCore.ProfileCall, device: String) async -> GattOutcome {
        do throws(BlueZError) {
            if let bytes = call.bytes {
                try await central.writeValue(characteristic: call.path, value: bytes, type: call.type, timeout: call.timeout)
                return .profileCall(.success([]), linkDropped: false)
            }
            return .profileCall(.success(try await central.readValue(characteristic: call.path, timeout: call.timeout)), linkDropped: false)
        } catch {
            let dropped = !(central.device(device)?.servicesResolved ?? false)
            var mapped = map(error)
            if refusal(error) != nil {
                mapped.message += " (the device needs pairing, which profile steps do not do yet)"
            }
            return .profileCall(.failure(mapped), linkDropped: dropped)
        }
    }

    /// The error when BlueZ refused a command for lack of pairing (the core may pair and send it again).
    private static func refusal(_ error: BlueZError) -> BluetoothError? {
        let e = BluetoothError(error)
        return SessionCore.isSecurityRefusal(e, linkDropped: false) ? e : nil
    }

    /// A BlueZ error as a command error (SPEC §4 codes).
    static func map(_ error: BlueZError) -> CommandError {
        switch error.code {
        case .timeout:
            return CommandError(.timeout, "BlueZ did not answer before the command's deadline (\(error.name))")
        case .notConnected, .disconnected:
            return CommandError(.notConnected, "\(error.name): \(error.message)")
        default:
            return .gattError(name: error.name, message: error.message)
        }
    }
}
