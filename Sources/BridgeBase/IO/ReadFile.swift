#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The whole content of the file at `path`, read with `read(2)` (`EINTR` retried).
///
/// - Parameter limit: reading stops with `EFBIG` when the file holds more bytes than this (a state
///   or config file that large is not one of ours).
/// - Returns: the bytes, or the `errno` of the `open` or `read` that failed (`ENOENT`: no such file).
public func readFile(_ path: String, limit: Int = 64 << 20) -> Result<[UInt8], ReadFileError> {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return .failure(ReadFileError(errno: errno)) }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count > 0 {
            bytes.append(contentsOf: chunk[..<count])
            if bytes.count > limit { return .failure(ReadFileError(errno: EFBIG)) }
        } else if count == 0 {
            return .success(bytes)
        } else if errno != EINTR {
            return .failure(ReadFileError(errno: errno))
        }
    }
}

/// Why ``readFile(_:limit:)`` failed: the `errno`, with its text.
public struct ReadFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The `errno` of the call that failed.
    public var errno: Int32

    /// A failure with this `errno`.
    public init(errno: Int32) { self.errno = errno }

    /// Whether the file does not exist.
    public var isMissing: Bool { errno == ENOENT }

    public var description: String { String(cString: strerror(errno)) }
}
