/// The QoS 1/2 publishes the broker has not acknowledged yet, so that a clean disconnect can wait
/// for them.
///
/// Every libmosquitto call runs on the session's loop thread and publishes are only queued (the
/// handle is in threaded mode), so `on_publish` for a message id always comes after
/// `mosquitto_publish` returned it: no early completion to reconcile. QoS 0 publishes are not
/// tracked (`on_publish` for them, after the write, finds nothing), which keeps the value path
/// free of bookkeeping.
struct PublishTracker: Sendable {
    private var unacknowledged: Set<Int32> = []

    init() {
        unacknowledged.reserveCapacity(64)
    }

    /// The number of QoS 1/2 publishes not acknowledged yet.
    var pendingAcknowledgements: Int { unacknowledged.count }

    /// Registers a message libmosquitto queued with `mid`.
    mutating func published(mid: Int32, qos: Int) {
        if qos > 0 { unacknowledged.insert(mid) }
    }

    /// Forgets every pending message (the handle that held them was reinitialised); returns how many.
    mutating func forgetAll() -> Int {
        defer { unacknowledged.removeAll(keepingCapacity: true) }
        return unacknowledged.count
    }

    /// Registers libmosquitto's `on_publish` for `mid` (after PUBACK/PUBCOMP for QoS 1/2, after
    /// the write for QoS 0). Returns whether nothing is pending any more.
    @discardableResult
    mutating func completed(mid: Int32) -> Bool {
        if !unacknowledged.isEmpty { unacknowledged.remove(mid) }
        return unacknowledged.isEmpty
    }
}
