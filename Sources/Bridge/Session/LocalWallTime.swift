import BridgeCore

#if canImport(Glibc)
import Glibc
#endif

/// The wall time a profile session renders templates with: the clock's Unix time and the local zone's offset from
/// UTC then (`localtime_r`'s `tm_gmtoff`).
enum LocalWallTime {
    /// `unix` with the local offset from UTC at that time.
    static func at(_ unix: Int64) -> WallTime {
        var seconds = time_t(unix)
        var local = tm()
        guard localtime_r(&seconds, &local) != nil else { return WallTime(unix: unix) }
        return WallTime(unix: unix, utcOffset: Int32(truncatingIfNeeded: local.tm_gmtoff))
    }
}
