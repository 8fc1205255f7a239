/// The wall time a profile's write templates render with (`{unix}`, and the local date and time
/// of a device clock): whole seconds since 1970-01-01 UTC, and the local offset from UTC then.
/// The runtime reads it with its clock and hands it to the session core with each input; the core
/// reads no clock.
public struct WallTime: Sendable, Hashable {
    /// Whole seconds since 1970-01-01 UTC.
    public var unix: Int64
    /// Seconds east of UTC of the local time zone at ``unix`` (`tm_gmtoff`).
    public var utcOffset: Int32

    /// Creates a wall time.
    public init(unix: Int64, utcOffset: Int32 = 0) {
        self.unix = unix
        self.utcOffset = utcOffset
    }
}
