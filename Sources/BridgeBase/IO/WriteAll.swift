#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Writes all of `bytes` to the file descriptor `fd` with `write(2)`: short writes are continued
/// and `EINTR` is retried. For blocking descriptors (files, standard output and error): on a
/// non-blocking one `EAGAIN` ends the write like any other error.
///
/// - Returns: nil when every byte was written, else the `errno` of the write that failed (`EIO`
///   when a write took nothing without an error).
@discardableResult
public func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
    guard let base = bytes.baseAddress else { return nil }
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, base + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if n == 0 { return EIO }
        offset += n
    }
    return nil
}

/// Writes all of `bytes` to `fd`; see ``writeAll(_:_:)-(_,UnsafeRawBufferPointer)``.
@discardableResult
public func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
    bytes.withUnsafeBytes { writeAll(fd, $0) }
}

/// Writes all of `text`, as UTF-8, to `fd`; see ``writeAll(_:_:)-(_,UnsafeRawBufferPointer)``.
@discardableResult
public func writeAll(_ fd: Int32, _ text: String) -> Int32? {
    var text = text
    return text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
}
