import BridgeCore
import Logging
import Synchronization
import Testing

@testable import Bridge

/// A profile's decode routes and waiters (SPEC §15) on the notification hot path.
@Suite struct ValueRouterProfileTests {
    static let path = "/org/bluez/hci0/dev_C8_12_34_56_78_9A/ffe0/ffe2"
    static let topic = "ble/thing/ffe0/ffe2"
    static let values = "ble/thing/values"

    static func router(logger: Logger? = nil) throws -> (ValueRouter, FakeBroker) {
        let broker = FakeBroker()
        let router = ValueRouter(mqtt: broker, clock: FakeClock(), logger: logger)
        router.setRoute(path: path, topic: topic, format: .hex, device: "thing")
        let decode = ProfileDecode.structure(try ProfileStruct(format: "<hB", fields: [.init("temperature"), .init("moisture")]))
        router.setDecode(path: path, decode, valuesTopic: values, profile: "p")
        return (router, broker)
    }

    static func published(_ broker: FakeBroker) -> [String] {
        broker.all.map { "\($0.message.topic) \(String(decoding: $0.message.payload, as: UTF8.self))" }
    }

    @Test("a decode route publishes the value, then its values; what does not decode is counted, not published")
    func decodeRoute() throws {
        let (router, broker) = try Self.router()
        router.handle(path: Self.path, value: [0x10, 0x00, 0x05])
        router.handle(path: Self.path, value: [0x10])
        #expect(Self.published(broker) == [
            #"ble/thing/ffe0/ffe2 {"raw":"100005","value":"100005"}"#, #"ble/thing/values {"profile":"p","values":{"temperature":16,"moisture":5}}"#,
            #"ble/thing/ffe0/ffe2 {"raw":"10","value":"10"}"#,
        ])
        #expect(router.decodeFailures == 1)
    }

    @Test("the first notification a decode route cannot decode is logged at notice, later ones at debug")
    func decodeFailureLogged() throws {
        let lines = Lines()
        let logger = Logger(label: "test") { _ in LineHandler(lines: lines) }
        let (router, _) = try Self.router(logger: logger)
        router.handle(path: Self.path, value: [0x10])
        router.handle(path: Self.path, value: [0x11])
        let logged = lines.value.withLock { $0 }
        #expect(logged.count == 2)
        #expect(logged.first?.hasPrefix("notice profile p: a notification on ble/thing/ffe0/ffe2 (10) does not decode") == true, "\(logged)")
        #expect(logged.last?.hasPrefix("debug ") == true, "\(logged)")
        #expect(router.decodeFailures == 2)
    }

    @Test("while armed, a notification goes to the waiter instead of the decode (one frame is not published twice as values); disarmed, the decode again")
    func waiter() throws {
        let (router, broker) = try Self.router()
        let taken = Mutex<[[UInt8]]>([])
        router.arm(path: Self.path) { value in taken.withLock { $0.append(value) } }
        router.handle(path: Self.path, value: [0x10, 0x00, 0x05])
        #expect(taken.withLock { $0 } == [[0x10, 0x00, 0x05]])
        #expect(Self.published(broker) == [#"ble/thing/ffe0/ffe2 {"raw":"100005","value":"100005"}"#])
        router.disarm(path: Self.path)
        router.handle(path: Self.path, value: [0x11, 0x00, 0x05])
        #expect(taken.withLock { $0.count } == 1)
        #expect(Self.published(broker).last == #"ble/thing/values {"profile":"p","values":{"temperature":17,"moisture":5}}"#)
    }
}

/// Log lines as `"level message"`.
private final class Lines: Sendable {
    let value = Mutex<[String]>([])
}

/// Keeps every log line in ``Lines``.
private struct LineHandler: LogHandler {
    let lines: Lines
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        lines.value.withLock { $0.append("\(event.level) \(event.message)") }
    }
}
