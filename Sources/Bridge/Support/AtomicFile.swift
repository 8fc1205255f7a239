import BridgeBase
#if canImport(Glibc)
import Glibc
#endif

/// Writes a file atomically: a temporary file beside it, fsync, rename. Readers see the old
/// content or the new, never a part.
enum AtomicFile {
    /// Writes `bytes` to `path`; nil on success, else what failed (`strerror`).
    static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) -> String? {
        let tmp = path + ".tmp"
        let fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode)
        guard fd >= 0 else { return "\(tmp): \(String(cString: strerror(errno)))" }
        let failure = writeAll(fd, bytes).map { String(cString: strerror($0)) }
            ?? (fsync(fd) == 0 ? nil : String(cString: strerror(errno)))
        close(fd)
        guard failure == nil, rename(tmp, path) == 0 else {
            let reason = failure ?? String(cString: strerror(errno))
            unlink(tmp)
            return "\(path): \(reason)"
        }
        return nil
    }

    /// Creates the directories above `path` that are missing (mode 0755).
    static func makeParentDirectories(of path: String) {
        let dir = path.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        guard !dir.isEmpty else { return }
        var current = dir.hasPrefix("/") ? "" : "."
        for part in dir.split(separator: "/") {
            current += "/" + part
            mkdir(current, 0o755)
        }
    }
}
