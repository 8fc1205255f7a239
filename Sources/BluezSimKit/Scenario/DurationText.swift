/// Parses durations written as `500ms`, `1.5s`, `2m`, `250us`, `0` or a bare number of seconds.
public enum DurationText {
    /// The duration `text` denotes, or nil when it is malformed or negative.
    public static func parse(_ text: String) -> Duration? {
        let s = text.trimmingSpaces()
        guard !s.isEmpty else { return nil }
        let units: [(String, Double)] = [("ms", 1e-3), ("us", 1e-6), ("µs", 1e-6), ("ns", 1e-9), ("s", 1), ("m", 60), ("h", 3600)]
        var number = s
        var scale = 1.0
        for (suffix, factor) in units where s.hasSuffix(suffix) {
            number = String(s.dropLast(suffix.count)).trimmingSpaces()
            scale = factor
            break
        }
        guard let value = Double(number), value >= 0, value.isFinite else { return nil }
        let nanos = (value * scale * 1e9).rounded()
        guard nanos < 1e18 else { return nil }
        return .nanoseconds(Int64(nanos))
    }

    /// Whole nanoseconds of `d` (clamped at zero).
    public static func nanoseconds(_ d: Duration) -> UInt64 {
        let (s, atto) = d.components
        if s < 0 { return 0 }
        return UInt64(s) &* 1_000_000_000 &+ UInt64(atto / 1_000_000_000)
    }
}

extension String {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s.removeFirst() }
        while let l = s.last, l == " " || l == "\t" { s.removeLast() }
        return String(s)
    }
}
