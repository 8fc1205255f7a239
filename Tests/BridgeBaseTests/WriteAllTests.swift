import BridgeBase
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``writeAll(_:_:)``: the whole buffer reaches the descriptor, and a failure is reported.
@Suite struct WriteAllTests {
    /// Reads what is in the pipe's read end (non-blocking).
    private func drain(_ fd: Int32) -> [UInt8] {
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { return out }
            out += buffer[0..<n]
        }
    }

    @Test("bytes and text arrive whole, in order")
    func writesEverything() throws {
        var fds: [Int32] = [0, 0]
        try #require(pipe(&fds) == 0)
        defer { close(fds[0]) }
        _ = fcntl(fds[0], F_SETFL, fcntl(fds[0], F_GETFL) | O_NONBLOCK)
        let bytes = (0..<3000).map { UInt8(truncatingIfNeeded: $0) }
        #expect(writeAll(fds[1], bytes) == nil)
        #expect(writeAll(fds[1], "héllo") == nil)
        close(fds[1])
        #expect(drain(fds[0]) == bytes + Array("héllo".utf8))
    }

    @Test("a descriptor that refuses the write reports its errno")
    func reportsFailure() {
        #expect(writeAll(-1, [1, 2, 3]) == EBADF)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { Issue.record("pipe failed"); return }
        close(fds[0])
        signal(SIGPIPE, SIG_IGN)
        #expect(writeAll(fds[1], "x") == EPIPE)
        close(fds[1])
    }

    @Test("an empty buffer writes nothing and succeeds")
    func empty() {
        #expect(writeAll(-1, [UInt8]()) == nil)
    }
}
