import BridgeCore
import RuntimeCore
import Synchronization

/// The connection slots of `bluetooth.max_connections` (SPEC §6), per adapter (SPEC §10): each adapter has
/// its own ``ConnectionSlots`` of that capacity, shared by the sessions connecting through it, granted in
/// arrival order; a grant reaches the waiting session as ``SessionInput/slotGranted``. A device's adapter is
/// the one in its object path (`/org/bluez/hci1/dev_…` → `hci1`).
final class SlotPool: Sendable {
    private struct State {
        let capacity: Int
        var adapters: [String: ConnectionSlots<String>] = [:]
        var mailboxes: [String: Mailbox<SessionInput>] = [:]

        func slots(_ adapter: String) -> ConnectionSlots<String> {
            adapters[adapter] ?? ConnectionSlots(capacity: capacity)
        }
    }

    /// One adapter's slots at one moment.
    struct Usage: Sendable, Equatable {
        var max: Int
        var inUse: Int
        var waiting: Int
    }

    private let state: Mutex<State>

    /// Slots of `capacity` per adapter.
    init(capacity: Int) {
        state = Mutex(State(capacity: capacity))
    }

    /// The capacity of each adapter.
    var capacity: Int { state.withLock { $0.capacity } }

    /// Asks for a slot for the device at `path` on its adapter; the grant is sent to `mailbox` (now or later).
    func request(_ path: String, mailbox: Mailbox<SessionInput>) {
        let adapter = BlueZNames.adapterName(of: path)
        let granted = state.withLock { s in
            s.mailboxes[path] = mailbox
            var slots = s.slots(adapter)
            let granted = slots.request(path)
            s.adapters[adapter] = slots
            return granted
        }
        if granted { mailbox.send(.slotGranted) }
    }

    /// Gives a slot back (or leaves the queue); the next waiters of that adapter get theirs.
    func release(_ path: String) {
        let adapter = BlueZNames.adapterName(of: path)
        let granted: [Mailbox<SessionInput>] = state.withLock { s in
            guard var slots = s.adapters[adapter] else { return [] }
            let next = slots.release(path)
            s.adapters[adapter] = slots
            return next.compactMap { s.mailboxes[$0] }
        }
        for mailbox in granted { mailbox.send(.slotGranted) }
    }

    /// How many slots are held, on every adapter.
    var inUse: Int { state.withLock { $0.adapters.values.reduce(0) { $0 + $1.holders.count } } }

    /// Devices waiting, adapter by adapter (by name), each in order.
    var waiting: [String] {
        state.withLock { s in s.adapters.sorted { $0.key < $1.key }.flatMap(\.value.waiting) }
    }

    /// Free slots of an adapter (its capacity when nothing was asked of it).
    func free(on adapter: String) -> Int {
        state.withLock { s in
            let slots = s.slots(adapter)
            return max(0, slots.capacity - slots.holders.count)
        }
    }

    /// Each adapter's slots: the `adapters` named (even those nothing was asked of yet) and every adapter in use.
    func usage(adapters: [String]) -> [String: Usage] {
        state.withLock { s in
            var out: [String: Usage] = [:]
            for name in Set(adapters).union(s.adapters.keys) {
                let slots = s.slots(name)
                out[name] = Usage(max: slots.capacity, inUse: slots.holders.count, waiting: slots.waiting.count)
            }
            return out
        }
    }
}
