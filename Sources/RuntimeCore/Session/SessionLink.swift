import BridgeCore

/// One link of a session (a connection, or its readiness): what the session set up on it and how far its setup
/// and pairing went. Carried by ``SessionPhase/linked(_:)``; nothing of it outlives the link: a loss of the link (or
/// of readiness) drops it, and the next link starts from an empty one.
package struct SessionLink<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The setup of the link, in the session's GATT queue before the work (commands, polls).
    package struct Setup: Sendable {
        /// Its operations not started yet (the last is its `setupDone` marker).
        package var operations: [GattOperation<Instant>] = []
        /// It was queued and its marker has not run: the work waits. A failed pairing empties ``operations`` and
        /// leaves this set: nothing more runs on the link.
        package var running = false
        /// Subscriptions it queued, and those refused (all refused: the link is not subscribed).
        package var subscribeAttempts = 0
        package var subscribeFailures = 0
    }

    /// The bridge's `Pair` (and `Trusted`) in flight on this link.
    package struct PairingRun: Sendable {
        /// The operation refused for lack of pairing, run once more after the pairing (nil: a pairing before the
        /// setup, which then goes on).
        package var retry: GattOperation<Instant>?
    }

    /// The setup of this link.
    package var setup = Setup()
    /// Characteristic object paths mapped on this link (mapped or skipped by the configuration).
    package var mappedPaths: Set<String> = []
    /// Characteristic object paths that notify.
    package var notifying: [String] = []
    /// Notifying through an `AcquireNotify` socket (a subset of ``notifying``), by path.
    package var acquired: [String: MappedCharacteristic] = [:]
    /// Sockets that hung up while the link stayed: subscribed again at ``resubscribeAt`` if it still is.
    package var resubscribe: [MappedCharacteristic] = []
    package var resubscribeAt: Instant?
    /// The next `poll` read of each characteristic with a `poll` interval, by path.
    package var pollDue: [String: Instant] = [:]
    /// The pairing in flight, if any (its completion comes back as ``SessionInput/pairFinished(attempt:error:)``).
    package var pairing: PairingRun?
    /// This link paired (successfully): a refusal now is not for lack of a bond.
    package var paired = false
    /// This link's pairing failed, with this error: not again on this link.
    package var pairingFailure: BluetoothError?

    /// A new link: nothing set up yet.
    package init() {}
}
