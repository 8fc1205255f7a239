import BridgeBase
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// ``readFile(_:limit:)``: a whole file over several reads, a missing one, one over the limit.
@Suite struct ReadFileTests {
    /// A new file with `bytes` in a new temporary directory; its path.
    private func file(_ bytes: [UInt8]) throws -> String {
        var template = Array("/tmp/readfile-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { buffer in mkdtemp(buffer.baseAddress!).map { String(cString: $0) } }
        let dir = try #require(made)
        let path = dir + "/data"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        #expect(writeAll(fd, bytes) == nil)
        close(fd)
        return path
    }

    @Test("every byte of a file larger than one read, in order")
    func readsEverything() throws {
        let bytes = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let path = try file(bytes)
        #expect(try readFile(path).get() == bytes)
        #expect(try readFile(try file([])).get() == [])
    }

    @Test("a missing file and a file over the limit say why")
    func failures() throws {
        let missing = readFile("/nonexistent-\(getpid())/x")
        #expect(missing == .failure(ReadFileError(errno: ENOENT)))
        if case .failure(let error) = missing { #expect(error.isMissing) }
        let big = try file([UInt8](repeating: 1, count: 100_000))
        #expect(readFile(big, limit: 70_000) == .failure(ReadFileError(errno: EFBIG)))
        #expect(try readFile(big, limit: 100_000).get().count == 100_000)
    }
}
