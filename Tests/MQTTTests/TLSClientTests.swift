import BridgeBase
import Foundation
import Testing

@testable import MQTT

/// TLS against a real mosquitto: a test CA, a server certificate for 127.0.0.1, a listener with
/// passwords and one that requires a client certificate. The handshake runs on the poll loop
/// (non-blocking `SSL_connect` steps), so these cover its polling.
@Suite("MQTTClient over TLS", .timeLimit(.minutes(2)))
struct TLSClientTests {
    /// A broker with a TLS listener (passwords `bridge:s3cret`) and an mTLS listener, using the
    /// shared ``TestCertificates``.
    struct TLSBroker {
        let broker: MosquittoBroker
        let tlsPort: Int
        let mtlsPort: Int
        let directory: String

        static func start() async throws -> TLSBroker {
            let dir = try await TestCertificates.directory()
            let tlsPort = try MosquittoBroker.freeLoopbackPort()
            let mtlsPort = try MosquittoBroker.freeLoopbackPort()
            let broker = try MosquittoBroker { _ in
                """
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
            try await broker.start()
            return TLSBroker(broker: broker, tlsPort: tlsPort, mtlsPort: mtlsPort, directory: dir)
        }

        func configuration(
            clientID: String, port: Int? = nil, password: String? = "s3cret", tls: TLSSettings
        ) -> MQTTConfiguration {
            var configuration = MQTTConfiguration(
                host: "127.0.0.1", port: port ?? tlsPort, clientID: clientID, username: password == nil ? nil : "bridge",
                password: password, tls: tls)
            configuration.reconnectDelay = .milliseconds(100)
            configuration.maxReconnectDelay = .seconds(1)
            return configuration
        }
    }

    @Test("CA file and password: connects over TLS on a shared loop, publishes from the loop thread, receives")
    func connectsOverTLS() async throws {
        let tls = try await TLSBroker.start()
        defer { tls.broker.kill() }
        let loop = PollLoop(name: "shared-tls")
        loop.start()
        defer { loop.stop() }
        let test = TestClient(
            tls.configuration(clientID: "tls", tls: .init(caFile: "\(tls.directory)/ca.pem")), loop: loop)
        let prefix = uniqueTopic("tls")
        test.client.subscribe("\(prefix)/#")
        test.client.start()
        try await test.expectConnected()
        let connectedLog = try await test.logs.next { $0.level == .info }
        #expect(connectedLog.message == "connected to mqtts://127.0.0.1:\(tls.tlsPort)")
        try await test.confirmSubscription(topic: "\(prefix)/probe")

        let client = test.client
        let pipe = PipeParticipant {
            for index in 0..<3 { _ = client.publish(topic: "\(prefix)/value", payload: [UInt8(index)]) }
        }
        loop.add(pipe)
        pipe.signal()
        for index in 0..<3 {
            let message = try await test.messages.next { $0.topic == "\(prefix)/value" }
            #expect(message.payload == [UInt8(index)])
        }
        await test.disconnect()
        #expect(try await test.expectDisconnected() == "disconnected by the client")
        #expect(loop.isRunning)
    }

    @Test("a client certificate: connects to a listener that requires one")
    func clientCertificate() async throws {
        let tls = try await TLSBroker.start()
        defer { tls.broker.kill() }
        let dir = tls.directory
        let test = try await TestClient.connected(
            tls.configuration(
                clientID: "mtls", port: tls.mtlsPort, password: nil,
                tls: .init(caFile: "\(dir)/ca.pem", certFile: "\(dir)/client.pem", keyFile: "\(dir)/client.key")))
        let topic = uniqueTopic("mtls")
        test.client.subscribe(topic)
        try await test.confirmSubscription(topic: topic)
        await test.disconnect()
    }

    @Test("a CA that did not sign the broker's certificate: the failure names the CA file")
    func wrongCA() async throws {
        let tls = try await TLSBroker.start()
        defer { tls.broker.kill() }
        let caFile = "\(tls.directory)/other-ca.pem"
        let test = TestClient(tls.configuration(clientID: "wrong-ca", tls: .init(caFile: caFile)))
        test.client.start()
        let first = try await test.logs.next { $0.level == .warning }
        let second = try await test.logs.next { $0.level == .warning }
        #expect(
            first.message.contains("could not be verified against the CA certificates of mqtt.tls.ca_file (\(caFile))"),
            "\(first)")
        #expect(first.message.contains("certificate verify failed"), "\(first)")
        #expect(first.message.hasSuffix("retrying in 100 ms"))
        #expect(second.message.hasSuffix("retrying in 200 ms"))
        #expect(!test.client.isConnected)
        await test.disconnect()
    }

    @Test("without a CA file the system's store is used (it does not know the test CA)")
    func systemStore() async throws {
        let tls = try await TLSBroker.start()
        defer { tls.broker.kill() }
        let test = TestClient(tls.configuration(clientID: "system-store", tls: .init()))
        test.client.start()
        let first = try await test.logs.next { $0.level == .warning }
        #expect(first.message.contains("could not be verified against the system's CA certificates"), "\(first)")
        await test.disconnect()
    }

    @Test("a wrong password: refused, said so, retried with a growing delay")
    func wrongPassword() async throws {
        let tls = try await TLSBroker.start()
        defer { tls.broker.kill() }
        let test = TestClient(
            tls.configuration(clientID: "wrong-pw", password: "wrong", tls: .init(caFile: "\(tls.directory)/ca.pem")))
        test.client.start()
        let first = try await test.logs.next { $0.level == .warning }
        let second = try await test.logs.next { $0.level == .warning }
        #expect(first.message.lowercased().contains("not authori"), "\(first)")
        #expect(first.message.hasSuffix("retrying in 100 ms"))
        #expect(second.message.hasSuffix("retrying in 200 ms"))
        #expect(!test.client.isConnected)
        await test.disconnect()
    }
}
