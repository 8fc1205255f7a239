/// Whether the broker still answers, as a pure state machine over monotonic milliseconds (SPEC §10 rule 7: a
/// bridge cut off from its broker must know within `keepalive`, before the broker publishes its will at
/// 1.5 × keepalive).
///
/// libmosquitto's own keep-alive notices a silent connection only about 2 × keepalive after the last packet it
/// received: it sends PINGREQ once nothing came for a keep-alive, and gives up a keep-alive later. Instead, the
/// session sends a **probe** every quarter keep-alive (an UNSUBSCRIBE of a filter it never subscribes to: the
/// broker answers every UNSUBSCRIBE with an UNSUBACK carrying the same packet id, and nothing changes on the
/// broker), one at a time. An answered probe proves that the broker received something from this client no earlier
/// than the probe was sent; so the broker's keep-alive timer, and its will, cannot fire before
/// `sent + 1.5 × keepalive`. The connection counts as **cut off** once the last answered probe was sent a whole
/// keep-alive ago: at least half a keep-alive before the will, whatever the broker's timing. A healthy broker
/// answers each probe within a round trip, so that moment never comes while it does (it would take a round trip of
/// more than ¾ keep-alive).
///
/// Before any probe is answered, the connection's CONNACK stands for one sent when it arrived.
struct BrokerLiveness: Sendable {
    /// The keep-alive, in milliseconds.
    let keepAliveMs: Int64
    /// When the last answered probe was sent (or CONNACK arrived).
    private(set) var confirmedMs: Int64
    /// The probe waiting for its answer: its packet id and when it was sent.
    private(set) var outstanding: (mid: Int32, sentMs: Int64)?
    /// When the next probe is due (once none is outstanding).
    private(set) var nextProbeMs: Int64

    /// A connection the broker accepted at `nowMs` (CONNACK): a probe is due at once.
    init(keepAliveMs: Int64, connectedAtMs nowMs: Int64) {
        self.keepAliveMs = max(keepAliveMs, 1)
        confirmedMs = nowMs
        nextProbeMs = nowMs
    }

    /// The interval between probes: a quarter keep-alive (at least every half keep-alive, as rule 7 asks, with a
    /// round trip to spare).
    var probeIntervalMs: Int64 { max(keepAliveMs / 4, 1) }

    /// Whether a probe should be sent now.
    func probeDue(atMs nowMs: Int64) -> Bool { outstanding == nil && nowMs >= nextProbeMs }

    /// A probe with packet id `mid` was queued at `nowMs`.
    mutating func probeSent(mid: Int32, atMs nowMs: Int64) {
        outstanding = (mid, nowMs)
        nextProbeMs = nowMs + probeIntervalMs
    }

    /// Queuing a probe failed at `nowMs` (libmosquitto refused it): try again at the next interval.
    mutating func probeFailed(atMs nowMs: Int64) {
        nextProbeMs = nowMs + probeIntervalMs
    }

    /// An UNSUBACK with packet id `mid` arrived; returns whether it answered the outstanding probe.
    @discardableResult
    mutating func answered(mid: Int32) -> Bool {
        guard let probe = outstanding, probe.mid == mid else { return false }
        confirmedMs = max(confirmedMs, probe.sentMs)
        outstanding = nil
        return true
    }

    /// The moment the connection counts as cut off if no probe is answered meanwhile.
    var deadlineMs: Int64 { confirmedMs + keepAliveMs }

    /// Whether the connection is cut off at `nowMs`.
    func isCutOff(atMs nowMs: Int64) -> Bool { nowMs >= deadlineMs }

    /// When the session must look again: the next probe (when none is outstanding) or the deadline.
    var nextWakeMs: Int64 { outstanding == nil ? min(nextProbeMs, deadlineMs) : deadlineMs }
}
