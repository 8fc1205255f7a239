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
        var written = 0
        let ok: Bool = bytes.withUnsafeBytes { raw in
            while written < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + written, raw.count - written)
                if n < 0 && errno == EINTR { continue }
                if n <= 0 { return false }
                written += n
            }
            return fsync(fd) == 0
        }
        let failure = ok ? nil : String(cString: strerror(errno))
        close(fd)
        guard ok, rename(tmp, path) == 0 else {
            let reason = failure ?? String(cString: strerror(errno))
            unlink(tmp)
            return "\(path): \(reason)"
        }
        return nil
    }
}
