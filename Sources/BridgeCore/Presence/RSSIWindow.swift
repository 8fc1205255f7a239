/// The RSSI of one tracker smoothed by a median over the last few seconds (SPEC §12): a phone's advertisements
/// arrive on three channels at different strengths, and a hand or a body in the way drops single readings by 10 dB
/// or more; the median of a few seconds ignores both without lagging like an average over a minute.
///
/// Readings of 127 (BlueZ's "invalid", what btvirt reports) and outside ``SightingsPayload/rssiRange`` are ignored.
/// When every reading has left the window (the tracker went quiet), ``median`` keeps the last value computed.
public struct RSSIWindow<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// How far back readings count.
    public let span: Duration
    /// The most readings kept (the oldest go first): bounds the work per advertisement of a chatty device.
    public let capacity: Int
    /// The readings in the window, oldest first.
    public private(set) var readings: [(rssi: Int, at: Instant)] = []
    /// The median as last computed (``add(_:at:)``, ``expire(now:)``), `nil` before the first valid reading.
    public private(set) var median: Int?

    /// Creates an empty window.
    public init(span: Duration = .seconds(5), capacity: Int = 32) {
        precondition(capacity > 0, "capacity must be positive")
        self.span = span
        self.capacity = capacity
    }

    /// Whether `rssi` is a real reading: not 127 and inside ``SightingsPayload/rssiRange``.
    public static func isValid(_ rssi: Int) -> Bool {
        rssi != 127 && SightingsPayload.rssiRange.contains(Int64(rssi))
    }

    /// Adds a reading at `now` (ignored when invalid) and returns the new median.
    @discardableResult
    public mutating func add(_ rssi: Int, at now: Instant) -> Int? {
        guard Self.isValid(rssi) else { return median }
        if readings.count == capacity { readings.removeFirst() }
        readings.append((rssi, now))
        return expire(now: now)
    }

    /// Drops the readings older than ``span`` at `now` and returns the median of those left (the last median when
    /// none is left). For an even count: the mean of the two middle readings, rounded toward zero (dBm are negative:
    /// toward the stronger one).
    @discardableResult
    public mutating func expire(now: Instant) -> Int? {
        if let firstFresh = readings.firstIndex(where: { now < $0.at.advanced(by: span) }) {
            if firstFresh > 0 { readings.removeFirst(firstFresh) }
        } else {
            readings.removeAll(keepingCapacity: true)
        }
        guard !readings.isEmpty else { return median }
        let sorted = readings.map(\.rssi).sorted()
        let middle = sorted.count / 2
        median = sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        return median
    }

    /// Forgets every reading and the median.
    public mutating func reset() {
        readings.removeAll()
        median = nil
    }
}
