/// A session's one GATT queue (SPEC §4): everything the session asks of its peripheral, one BlueZ call at a time.
///
/// A link's setup runs first (``SessionLink/Setup``: it belongs to the link); while it runs the work waits. The
/// work (commands and polls) runs in arrival order once the device is ready, and outlives a link: commands wait
/// for the next one (or their deadline). At most one operation is in flight (``inFlight``); it outlives a link too:
/// its completion comes back as an input whatever happened to the link meanwhile, tagged with the connection
/// attempt it was sent for, and nothing else starts before it.
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

    /// Commands and polls, in arrival order.
    package var work: [GattOperation<Instant>] = []
    /// The call in flight, if any.
    package var inFlight: InFlight?
    /// A device profile's steps running (SPEC §15): one item spanning several calls, each of which is ``inFlight``
    /// while it runs.
    package var run: ProfileRun<Instant>?

    /// An empty queue.
    package init() {}

    /// The commands waiting in ``work`` (`commands.queue` bounds them).
    package var commandCount: Int {
        work.count { if case .command = $0 { true } else { false } }
    }

    /// A call is in flight or a profile run goes on: nothing else starts.
    package var busy: Bool { inFlight != nil || run != nil }

    /// The command in flight (or a profile command running), while its deadline has not answered it.
    package var unansweredCommand: PendingCommand<Instant>? {
        if case .command(let command, answered: false) = inFlight { return command }
        if let run, !run.answered, let command = run.command { return command }
        return nil
    }

    /// The command of ``unansweredCommand`` was answered (its deadline, the session's end): not answered again.
    package mutating func markAnswered() {
        if case .command(let command, answered: false) = inFlight {
            inFlight = .command(command, answered: true)
        } else if run?.command != nil {
            run?.answered = true
        }
    }

    /// The link (or readiness) went away: what it queued is void (poll reads, resubscriptions of sockets that hung
    /// up; its setup went with it, and the next link's setup subscribes again); commands wait for the next link (or
    /// their deadline).
    package mutating func linkLost() {
        work.removeAll {
            switch $0 {
            case .read, .subscribe: true
            case .command, .readDescriptor, .setupDone, .pair, .profileSteps: false
            }
        }
    }
}
