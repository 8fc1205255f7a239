import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A test CA, a server certificate for 127.0.0.1, a client certificate, a second CA that signed
/// nothing here, and a mosquitto password file (`bridge:s3cret`): made once per test process
/// (RSA key generation is slow on a shared machine) in a directory removed at exit.
enum TestCertificates {
    private static let making = Mutex<Task<String, any Error>?>(nil)

    /// The directory with `ca.pem`, `other-ca.pem`, `server.pem`/`.key`, `client.pem`/`.key`, `passwd`.
    static func directory() async throws -> String {
        let task = making.withLock { task in
            if let task { return task }
            let made = Task { try await make() }
            task = made
            return made
        }
        return try await task.value
    }

    static var path: String { "\(FileManager.default.temporaryDirectory.path)/mqtt-tests-certificates-\(getpid())" }

    private static func make() async throws -> String {
        let dir = path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestCertificates.path) }
        func run(_ tool: String, _ arguments: [String]) async throws {
            let (status, output) = try await MosquittoBroker.run(tool, arguments, timeout: .seconds(60))
            guard status == 0 else { throw TestHelperError(description: "\(tool) \(arguments): \(output)") }
        }
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: "\(dir)/san.ext", atomically: true, encoding: .utf8)
        for ca in ["ca", "other-ca"] {
            try await run(
                "/usr/bin/openssl",
                [
                    "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(dir)/\(ca).key", "-out",
                    "\(dir)/\(ca).pem", "-days", "2", "-subj", "/CN=mqtt test \(ca)",
                ])
        }
        for (name, extra) in [("server", ["-extfile", "\(dir)/san.ext"]), ("client", [])] {
            try await run(
                "/usr/bin/openssl",
                [
                    "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(dir)/\(name).key", "-out",
                    "\(dir)/\(name).csr", "-subj", "/CN=\(name == "server" ? "127.0.0.1" : "bridge")",
                ])
            try await run(
                "/usr/bin/openssl",
                [
                    "x509", "-req", "-in", "\(dir)/\(name).csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key",
                    "-CAcreateserial", "-CAserial", "\(dir)/ca.srl", "-out", "\(dir)/\(name).pem", "-days", "2",
                ] + extra)
        }
        try await run("/usr/bin/mosquitto_passwd", ["-b", "-c", "\(dir)/passwd", "bridge", "s3cret"])
        return dir
    }
}
