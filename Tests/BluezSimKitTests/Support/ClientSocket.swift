import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The client's end of an acquired notification socket, as a test reads it.
///
/// ``close()`` closes the descriptor once, however often it is called: a second `close(2)` of the same number
/// would close whatever another test running beside this one opened under it since (a D-Bus connection's socket:
/// that test's calls then fail with `Disconnected` or `NoReply`).
final class ClientSocket: Sendable {
    let fd: Int32
    private let closed = Mutex(false)

    init(fd: Int32) {
        self.fd = fd
    }

    /// Waits (on a Dispatch thread, not the test's) up to `timeoutMs` for `events`; the `revents`
    /// (0 on timeout).
    func poll(_ events: Int16 = Int16(POLLIN), timeoutMs: Int32 = 5_000) async -> Int16 {
        let fd = self.fd
        return await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var p = pollfd(fd: fd, events: events, revents: 0)
                var n: Int32
                repeat { n = Glibc.poll(&p, 1, timeoutMs) } while n < 0 && errno == EINTR
                continuation.resume(returning: n > 0 ? p.revents : 0)
            }
        }
    }

    /// One packet if one is queued now (never blocks).
    func receiveNow() -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        return n >= 0 ? Array(buffer[..<n]) : nil
    }

    /// The next packet, waiting up to `timeoutMs` for it.
    func receive(timeoutMs: Int32 = 5_000) async throws -> [UInt8] {
        if let packet = receiveNow() { return packet }
        let revents = await poll(timeoutMs: timeoutMs)
        guard revents & Int16(POLLIN) != 0, let packet = receiveNow() else {
            throw TestFailure("no packet on fd \(fd) within \(timeoutMs) ms (revents \(revents))")
        }
        return packet
    }

    /// Reads what is queued until the poll reports `POLLHUP` (true) or nothing happens for
    /// `timeoutMs` (false).
    func waitForHangUp(timeoutMs: Int32 = 5_000) async -> Bool {
        while true {
            let revents = await poll(timeoutMs: timeoutMs)
            if revents & Int16(POLLHUP) != 0 { return true }
            guard revents & Int16(POLLIN) != 0 else { return false }
            while receiveNow() != nil {}
        }
    }

    /// Writes one packet.
    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// The socket's type (`SOCK_SEQPACKET` expected).
    var type: Int32 {
        var value: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_TYPE, &value, &length)
        return value
    }

    func close() {
        let first = closed.withLock { closed -> Bool in
            defer { closed = true }
            return !closed
        }
        if first { _ = Glibc.close(fd) }
    }
}
