import BridgeCore
import Synchronization

/// The connection slots of `bluetooth.max_connections` (SPEC §6), shared by all sessions:
/// granted in arrival order; a grant reaches the waiting session as ``SessionInput/slotGranted``.
final class SlotPool: Sendable {
    private struct State {
        var slots: ConnectionSlots<String>
        var mailboxes: [String: Mailbox<SessionInput>] = [:]
    }

    private let state: Mutex<State>

    init(capacity: Int) {
        state = Mutex(State(slots: ConnectionSlots(capacity: capacity)))
    }

    /// Asks for a slot for the device at `path`; the grant is sent to `mailbox` (now or later).
    func request(_ path: String, mailbox: Mailbox<SessionInput>) {
        let granted = state.withLock { s in
            s.mailboxes[path] = mailbox
            return s.slots.request(path)
        }
        if granted { mailbox.send(.slotGranted) }
    }

    /// Gives a slot back (or leaves the queue); the next waiters get theirs.
    func release(_ path: String) {
        let granted: [Mailbox<SessionInput>] = state.withLock { s in
            s.slots.release(path).compactMap { s.mailboxes[$0] }
        }
        for mailbox in granted { mailbox.send(.slotGranted) }
    }

    /// How many slots are held.
    var inUse: Int { state.withLock { $0.slots.holders.count } }

    /// Devices waiting, in order.
    var waiting: [String] { state.withLock { $0.slots.waiting } }
}
