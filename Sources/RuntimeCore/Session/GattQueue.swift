/// A session's one GATT queue (SPEC §4): everything the session asks of its peripheral, one BlueZ call at a time.
///
/// A connection's setup runs first: its operations in order, the last its `setupDone` marker; while it runs
/// (``Setup/running``, until the marker ran) the work waits. The work (commands and polls) runs in arrival order
/// once the device is ready. At most one operation is in flight (``inFlight``); its completion comes back as an
/// input, whatever happened to the link meanwhile.
package struct GattQueue<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The BlueZ call in flight.
    package enum InFlight: Sendable {
        /// A setup or poll operation: a subscription, a read, a descriptor read.
        case operation
        /// A command. `answered`: its deadline passed first and it was answered then (BlueZ's late reply is not
        /// answered again, nor paired for).
        case command(PendingCommand<Instant>, answered: Bool)
        /// `Pair` (and `Trusted`).
        case pairing
    }

    /// The setup of the current connection.
    package struct Setup: Sendable {
        /// Its operations not started yet (the last is its `setupDone` marker).
        package var operations: [GattOperation<Instant>] = []
        /// It was queued and its marker has not run: the work waits.
        package var running = false
        /// Subscriptions it queued, and those refused (all refused: the connection is not subscribed).
        package var subscribeAttempts = 0
        package var subscribeFailures = 0
    }

    /// The setup of the current connection.
    package var setup = Setup()
    /// Commands and polls, in arrival order.
    package var work: [GattOperation<Instant>] = []
    /// The call in flight, if any.
    package var inFlight: InFlight?

    /// An empty queue.
    package init() {}

    /// The commands waiting in ``work`` (`commands.queue` bounds them).
    package var commandCount: Int {
        work.count { if case .command = $0 { true } else { false } }
    }

    /// A call is in flight: nothing else starts.
    package var busy: Bool { inFlight != nil }

    /// The command in flight, while its deadline has not answered it.
    package var unansweredCommand: PendingCommand<Instant>? {
        if case .command(let command, answered: false) = inFlight { return command }
        return nil
    }
}
