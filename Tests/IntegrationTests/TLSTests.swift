import Foundation
import Testing

/// `mqtts://` against a real mosquitto TLS listener with a test CA and a password file: good
/// credentials, a wrong password, a wrong CA, a client certificate, the system's CA store.
@Suite(.timeLimit(.minutes(2)))
struct TLSTests {
    /// A CA, a server certificate for 127.0.0.1, a client certificate, and a second CA that
    /// signed nothing here; a password file with bridge:s3cret.
    static func makeCertificates(in dir: String) async throws {
        func run(_ args: [String]) async throws {
            let result = try await ChildProcess.run("/usr/bin/openssl", args, directory: dir)
            guard result.termination == .exited(0) else { throw HarnessError("openssl \(args.joined(separator: " ")): \(result.output)") }
        }
        try "subjectAltName=IP:127.0.0.1\n".write(toFile: "\(dir)/san.ext", atomically: true, encoding: .utf8)
        for ca in ["ca", "other-ca"] {
            try await run(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(dir)/\(ca).key", "-out", "\(dir)/\(ca).pem",
                           "-days", "2", "-subj", "/CN=ble-mqtt-bridge test \(ca)"])
        }
        for (name, extra) in [("server", ["-extfile", "\(dir)/san.ext"]), ("client", [])] {
            try await run(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "\(dir)/\(name).key", "-out", "\(dir)/\(name).csr",
                           "-subj", "/CN=\(name == "server" ? "127.0.0.1" : "bridge")"])
            try await run(["x509", "-req", "-in", "\(dir)/\(name).csr", "-CA", "\(dir)/ca.pem", "-CAkey", "\(dir)/ca.key",
                           "-CAcreateserial", "-CAserial", "\(dir)/ca.srl", "-out", "\(dir)/\(name).pem", "-days", "2"] + extra)
        }
        let pw = try await ChildProcess.run(Paths.mosquittoPasswd, ["-b", "-c", "\(dir)/passwd", "bridge", "s3cret"], directory: dir)
        guard pw.termination == .exited(0) else { throw HarnessError("mosquitto_passwd: \(pw.output)") }
    }

    /// Certificates, a broker that also has a TLS listener with passwords and one that requires a
    /// client certificate, and the bridge with `mqtt` (its mqtt section, given the two ports; file
    /// names are relative to the test directory, where the configuration is).
    static func with(
        _ mqtt: @escaping @Sendable (_ tls: Int, _ mtls: Int) -> String, _ body: (Harness) async throws -> Void
    ) async throws {
        let tlsPort = try Broker.freePort()
        let mtlsPort = try Broker.freePort()
        var options = HarnessOptions()
        options.startSimulator = false
        options.startBroker = false
        options.startBridge = false
        options.brokerListeners = { dir in
            // `user root`: mosquitto started as root keeps root (else it drops to `mosquitto`,
            // which cannot read the test directory's files).
            """
            user root
            listener \(tlsPort) 127.0.0.1
            allow_anonymous false
            password_file \(dir)/passwd
            cafile \(dir)/ca.pem
            certfile \(dir)/server.pem
            keyfile \(dir)/server.key
            listener \(mtlsPort) 127.0.0.1
            allow_anonymous true
            require_certificate true
            cafile \(dir)/ca.pem
            certfile \(dir)/server.pem
            keyfile \(dir)/server.key
            """
        }
        options.config = { _ in mqtt(tlsPort, mtlsPort) + "\nbluetooth: { adapter: hci0 }\n" }
        try await Harness.with(options) { harness in
            try await makeCertificates(in: harness.directory)
            try await harness.startBroker()
            try harness.startBridge()
            try await body(harness)
        }
    }

    @Test("good credentials and CA: connected over TLS")
    func good() async throws {
        try await Self.with({ tls, _ in
            """
            mqtt:
              url: mqtts://127.0.0.1:\(tls)
              username: bridge
              password: s3cret
              tls: { ca_file: ca.pem }
            """
        }) { harness in
            try await harness.waitFor("ble/bridge/state", timeout: .seconds(15)) { $0.payload == "online" }
            _ = try await harness.waitForBridgeLog(from: 0, "connected over TLS") { $0.contains("connected to mqtts://127.0.0.1") }
        }
    }

    @Test("a wrong password: refused, said so, retried with a growing delay")
    func wrongPassword() async throws {
        try await Self.with({ tls, _ in
            """
            mqtt:
              url: mqtts://127.0.0.1:\(tls)
              username: bridge
              password: wrong
              tls: { ca_file: ca.pem }
            reconnect: { initial_delay: 200ms, max_delay: 2s }
            """
        }) { harness in
            var delays: [Int] = []
            while delays.count < 4 {
                let lines = harness.bridgeLog(from: 0).split(separator: "\n").filter { $0.contains("connecting to mqtts://") && $0.contains("failed") }
                delays = lines.compactMap { line in
                    line.range(of: "retrying in ").flatMap { Int(line[$0.upperBound...].prefix { $0.isNumber }) }
                }
                // The log is a file: poll it at a short interval.
                if delays.count < 4 { try await Task.sleep(for: .milliseconds(200)) }
            }
            let first = harness.bridgeLog(from: 0).split(separator: "\n").first { $0.contains("failed") } ?? ""
            #expect(first.lowercased().contains("not authori"), "\(first)")
            #expect(delays[1] > delays[0] && delays[2] > delays[1], "delays \(delays)")
            #expect(harness.observer.messages("ble/bridge/state").allSatisfy { $0.payload != "online" })
        }
    }

    @Test("a CA that did not sign the broker's certificate: the log says it could not be verified")
    func wrongCA() async throws {
        try await Self.with({ tls, _ in
            """
            mqtt:
              url: mqtts://127.0.0.1:\(tls)
              username: bridge
              password: s3cret
              tls: { ca_file: other-ca.pem }
            """
        }) { harness in
            let line = try await harness.waitForBridgeLog(from: 0, "the verification failure") { $0.contains("failed") && $0.contains("mqtts://") }
            #expect(line.contains("could not be verified against the CA certificates of mqtt.tls.ca_file"), "\(line)")
            #expect(line.contains("other-ca.pem"), "\(line)")
        }
    }

    @Test("a listener that requires a client certificate: connected with cert_file and key_file")
    func clientCertificate() async throws {
        try await Self.with({ _, mtls in
            """
            mqtt:
              url: mqtts://127.0.0.1:\(mtls)
              tls: { ca_file: ca.pem, cert_file: client.pem, key_file: client.key }
            """
        }) { harness in
            try await harness.waitFor("ble/bridge/state", timeout: .seconds(15)) { $0.payload == "online" }
        }
    }

    @Test("mqtts:// without a CA file uses the system's CA store (which does not know the test CA)")
    func systemStore() async throws {
        try await Self.with({ tls, _ in
            """
            mqtt:
              url: mqtts://127.0.0.1:\(tls)
              username: bridge
              password: s3cret
            """
        }) { harness in
            let line = try await harness.waitForBridgeLog(from: 0, "the verification failure") { $0.contains("failed") && $0.contains("mqtts://") }
            #expect(line.contains("could not be verified against the system's CA certificates"), "\(line)")
        }
    }
}
