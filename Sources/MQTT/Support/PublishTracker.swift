/// Bookkeeping of publishes libmosquitto has not completed yet, so that a clean disconnect can
/// wait until queued QoS 1/2 messages are acknowledged.
///
/// libmosquitto reports completion with the message id (`on_publish`: after the write for QoS 0,
/// after PUBACK/PUBCOMP for QoS 1/2), and its callback can run on the network thread before
/// `mosquitto_publish` has returned that id to the publishing thread. Both orders are handled:
/// a completion for an id not registered yet is remembered and cancels the registration.
struct PublishTracker: Sendable {
    private enum Entry: Sendable {
        case qos0
        case acknowledged
        case completedEarly
    }

    private var entries: [Int32: Entry] = [:]

    /// The number of QoS 1/2 publishes not acknowledged yet.
    private(set) var pendingAcknowledgements = 0

    init() {
        entries.reserveCapacity(64)
    }

    /// The number of message ids tracked (for tests).
    var trackedCount: Int { entries.count }

    /// Registers a successful `mosquitto_publish` that returned `mid`.
    mutating func published(mid: Int32, qos: Int) {
        if case .completedEarly = entries[mid] {
            entries[mid] = nil
            return
        }
        if qos > 0 {
            entries[mid] = .acknowledged
            pendingAcknowledgements += 1
        } else {
            entries[mid] = .qos0
        }
    }

    /// Registers libmosquitto's `on_publish` for `mid`.
    mutating func completed(mid: Int32) {
        switch entries.removeValue(forKey: mid) {
        case .acknowledged:
            pendingAcknowledgements -= 1
        case .qos0:
            break
        case .completedEarly, nil:
            entries[mid] = .completedEarly
        }
    }

    /// The connection ended: libmosquitto drops queued QoS 0 packets (they never complete);
    /// QoS 1/2 messages stay queued and are sent again after reconnecting.
    mutating func connectionLost() {
        entries = entries.filter { _, entry in
            if case .qos0 = entry { return false }
            return true
        }
    }
}
