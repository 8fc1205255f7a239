import BridgeCore
import RuntimeCore
import Synchronization

/// The pairing retry schedule (``PairingRetry``) of each device whose pairing failed (SPEC §11), by address. The
/// sessions' cores decide it and their executors record it here; a new session of the device (after BlueZ dropped a
/// temporary device object, or a move to another adapter) starts from it, and the pairing agent refuses the device's
/// requests while its delay runs.
final class PairingHolds: Sendable {
    private let book = Mutex<[BluetoothAddress: PairingRetry<BridgeInstant>]>([:])

    init() {}

    /// The schedule of `address` (a fresh one when none is recorded).
    func retry(of address: BluetoothAddress) -> PairingRetry<BridgeInstant> {
        book.withLock { $0[address] ?? PairingRetry() }
    }

    /// Records the schedule of `address` (a reset one removes it).
    func record(_ retry: PairingRetry<BridgeInstant>, for address: BluetoothAddress) {
        book.withLock { $0[address] = retry.failures == 0 ? nil : retry }
    }

    /// Whether a failed pairing's delay for `address` runs at `now`.
    func holds(_ address: BluetoothAddress, at now: BridgeInstant) -> Bool {
        book.withLock { $0[address]?.holds(at: now) ?? false }
    }
}
