#if canImport(Glibc)
import BridgeBase
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// An append-only line log file (`--notify-log`, `--write-log`).
///
/// Lines are collected in a buffer and written with `write(2)`: immediately when
/// `flushEachLine` is set, else whenever ``flush()`` is called (the simulator calls it every
/// 50 ms) or the buffer passes 64 KiB.
public final class EventLog: Sendable {
    private let fd: Int32
    private let flushEachLine: Bool
    private let buffer = Mutex<[UInt8]>([])

    /// Opens (creates) `path`, truncating it unless `append` is set (a restarted simulator keeps
    /// the lines of the run before).
    public init(path: String, flushEachLine: Bool, append: Bool = false) throws(ScenarioError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | (append ? O_APPEND : O_TRUNC), 0o644)
        guard fd >= 0 else {
            throw ScenarioError(code: .unreadable, file: path, message: "cannot open log file: errno \(errno)")
        }
        self.fd = fd
        self.flushEachLine = flushEachLine
    }

    deinit {
        flush()
        close(fd)
    }

    /// Current wall-clock time in nanoseconds since the Unix epoch.
    public static func unixTimeNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) &* 1_000_000_000 &+ UInt64(ts.tv_nsec)
    }

    /// Appends `<unix_time_ns> ` + `prefix` + hex of `bytes` + `suffix` + newline.
    func append(prefix: [UInt8], bytes: [UInt8], suffix: [UInt8] = [], time: UInt64 = EventLog.unixTimeNanoseconds()) {
        var line = [UInt8]()
        line.reserveCapacity(21 + prefix.count + bytes.count * 2 + suffix.count + 1)
        appendDecimal(time, to: &line)
        line.append(UInt8(ascii: " "))
        line.append(contentsOf: prefix)
        Hex.append(bytes, to: &line)
        line.append(contentsOf: suffix)
        line.append(UInt8(ascii: "\n"))
        let full = buffer.withLock { buf -> Bool in
            buf.append(contentsOf: line)
            return buf.count >= 65_536
        }
        if flushEachLine || full { flush() }
    }

    /// Writes out everything buffered.
    public func flush() {
        buffer.withLock { buf in
            guard !buf.isEmpty else { return }
            writeAll(fd, buf)
            buf.removeAll(keepingCapacity: true)
        }
    }

    private func appendDecimal(_ value: UInt64, to out: inout [UInt8]) {
        if value == 0 {
            out.append(UInt8(ascii: "0"))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var v = value
        withUnsafeMutableBytes(of: &digits) { d in
            while v > 0 {
                d[count] = UInt8(v % 10) + 48
                v /= 10
                count += 1
            }
            for i in stride(from: count - 1, through: 0, by: -1) { out.append(d[i]) }
        }
    }
}
