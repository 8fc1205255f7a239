import Foundation
import Hummingbird

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 response as the tests see it (the body decoded from chunks when chunked).
struct TestHTTPResponse: Sendable {
    var status: HTTPResponse.Status
    var headers: [(name: String, value: String)]
    var body: String

    /// The first value of the header `name` (case-insensitive).
    subscript(header name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }
}

/// A failure of the test client.
struct TestHTTPError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A few lines of HTTP/1.1 over a TCP socket to 127.0.0.1: one connection per request
/// (`Connection: close`), no redirects followed, no cookies kept. The blocking socket calls run on a
/// thread of their own, not on the tasks' executor (a 20 s receive timeout bounds them).
struct TestHTTPClient: Sendable {
    let port: Int

    /// The `Origin` a page served by this server would send.
    var origin: String { "http://127.0.0.1:\(port)" }

    func execute(
        _ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> TestHTTPResponse {
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
        text += "\r\n" + (body ?? "")
        let request = Array(text.utf8)
        let port = self.port
        return try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try Self.exchange(request, port: port) }) }.start()
        }
    }

    private static func exchange(_ request: [UInt8], port: Int) throws -> TestHTTPResponse {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestHTTPError("socket: errno \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw TestHTTPError("connect: errno \(errno)") }
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw TestHTTPError("send: errno \(errno)") }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            if let response = try parse(received, atEnd: false) { return response }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count == 0 { break }
            guard count > 0 else { throw TestHTTPError("recv: errno \(errno)") }
            received += buffer[..<count]
        }
        guard let response = try parse(received, atEnd: true) else {
            throw TestHTTPError("incomplete response: \(String(decoding: received, as: UTF8.self))")
        }
        return response
    }

    /// The response in `bytes`, or nil while it is incomplete. Without Content-Length or chunks the body
    /// ends with the connection (`atEnd`).
    static func parse(_ bytes: [UInt8], atEnd: Bool) throws -> TestHTTPResponse? {
        let separator = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.firstRange(of: separator) else { return nil }
        let lines = String(decoding: bytes[..<headEnd.lowerBound], as: UTF8.self).split(separator: "\r\n")
        let statusParts = lines.first?.split(separator: " ") ?? []
        guard statusParts.count >= 2, let code = Int(statusParts[1]) else {
            throw TestHTTPError("bad status line: \(lines.first ?? "")")
        }
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        var response = TestHTTPResponse(status: .init(code: code), headers: headers, body: "")
        let rest = Array(bytes[headEnd.upperBound...])
        if response[header: "Transfer-Encoding"]?.lowercased() == "chunked" {
            guard let body = try dechunk(rest) else { return nil }
            response.body = String(decoding: body, as: UTF8.self)
        } else if let length = response[header: "Content-Length"].flatMap({ Int($0) }) {
            guard rest.count >= length else { return nil }
            response.body = String(decoding: rest[..<length], as: UTF8.self)
        } else {
            guard atEnd else { return nil }
            response.body = String(decoding: rest, as: UTF8.self)
        }
        return response
    }

    /// The body of a chunked message, or nil until its last (empty) chunk has arrived.
    static func dechunk(_ bytes: [UInt8]) throws -> [UInt8]? {
        var body: [UInt8] = []
        var position = 0
        let crlf = Array("\r\n".utf8)
        while let lineEnd = bytes[position...].firstRange(of: crlf) {
            let line = String(decoding: bytes[position..<lineEnd.lowerBound], as: UTF8.self)
            guard let size = Int(line.split(separator: ";").first ?? "", radix: 16) else {
                throw TestHTTPError("bad chunk size: \(line)")
            }
            if size == 0 { return body }
            let start = lineEnd.upperBound
            guard bytes.count >= start + size + 2 else { return nil }
            body += bytes[start..<start + size]
            position = start + size + 2
        }
        return nil
    }
}
