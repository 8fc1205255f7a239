/// Counters of one simulated device (control `GetStats`).
struct DeviceStats: Sendable {
    /// `Connect` / `ConnectDevice` calls.
    var connectAttempts: UInt64 = 0
    /// Links established.
    var connects: UInt64 = 0
    /// Connection attempts that failed (injected, out of range, cancelled).
    var connectFailures: UInt64 = 0
    /// Connection attempts that found the peripheral linked elsewhere (another adapter of this
    /// simulator, or another simulator sharing the link directory): it did not answer at first.
    var linkConflicts: UInt64 = 0
    /// `Connect` calls that came while the device's link was up or going down (`Connected` still
    /// true): a client that waits for `Connected=false` before it retries never makes one.
    var connectsWhileLinked: UInt64 = 0
    /// Links that ended, for any reason.
    var disconnects: UInt64 = 0
    /// Links that ended without a `Disconnect` call (out of range, dropped, power, adapter removed).
    var linkLosses: UInt64 = 0
    /// `ReadValue` calls on characteristics that reached the peripheral.
    var reads: UInt64 = 0
    /// Reads answered with an error by the peripheral.
    var readFailures: UInt64 = 0
    /// Writes the peripheral accepted (the lines of the write log).
    var writes: UInt64 = 0
    /// Writes answered with an error or dropped by the peripheral.
    var writeFailures: UInt64 = 0
    /// `StartNotify` calls.
    var startNotifyCalls: UInt64 = 0
    /// `StopNotify` calls that ended a session (or an acquired socket).
    var stopNotifyCalls: UInt64 = 0
    /// `AcquireNotify` calls (refused ones included).
    var acquireNotifyCalls: UInt64 = 0
    /// Pairings started (`Pair` or a security elevation; one that others joined counts once).
    var pairingAttempts: UInt64 = 0
    /// Pairings that ended with a bond (`Pair` or a security elevation).
    var pairings: UInt64 = 0
    /// Pairings that failed.
    var pairingFailures: UInt64 = 0
}
