extension Duration {
    /// This duration in seconds, as a `Double` (e.g. for C APIs).
    public var inSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// This duration in whole milliseconds, rounded toward zero (saturating at the `Int64` limits).
    public var inMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        let (total, overflow2) = milliseconds.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if overflow2 { return seconds < 0 ? .min : .max }
        return total
    }

    /// This duration in whole milliseconds, rounded up, clamped to `0...Int32.max` (for `poll`).
    public var pollMilliseconds: Int32 {
        let (seconds, attoseconds) = components
        if seconds >= Int64(Int32.max / 1000) { return Int32.max }
        if seconds < 0 { return 0 }
        let millis = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(millis)
    }
}
