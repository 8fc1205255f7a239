import Hummingbird
import Logging
import ServiceLifecycle
import WebUI

/// The session cookie value the test servers use.
let testSession = "0123456789abcdef"

/// Runs the page's router in a real `Application` on 127.0.0.1 (a free port) while `body` runs, then
/// shuts it down gracefully. `body` gets a client for that port and the server's core.
func withWebServer<Value: Sendable>(
    token: String? = nil, broker: FakeBroker = FakeBroker(),
    _ body: @Sendable (TestHTTPClient, PageCore) async throws -> Value
) async throws -> Value {
    let core = broker.makeCore(settings(token: token))
    let (ports, bound) = AsyncStream.makeStream(of: Int.self)
    var logger = Logger(label: "web-test")
    logger.logLevel = .warning
    let app = Application(
        router: WebRouter.make(core: core, session: testSession),
        configuration: .init(address: .hostname("127.0.0.1", port: 0), serverName: nil),
        onServerRunning: { channel in
            bound.yield(channel.localAddress?.port ?? 0)
            bound.finish()
        },
        logger: logger)
    let services = ServiceGroup(configuration: .init(services: [app], gracefulShutdownSignals: [], logger: logger))
    return try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
            defer { bound.finish() }
            try await services.run()
        }
        defer { group.cancelAll() }
        guard let port = await ports.first(where: { _ in true }), port > 0 else {
            throw TestHTTPError("the server did not start")
        }
        do {
            let value = try await body(TestHTTPClient(port: port), core)
            await services.triggerGracefulShutdown()
            try await group.waitForAll()
            return value
        } catch {
            await services.triggerGracefulShutdown()
            throw error
        }
    }
}
