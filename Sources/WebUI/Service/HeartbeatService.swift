import ServiceLifecycle

/// Sends every live page the SSE comment line every `interval` (15 s), and ends every live stream on graceful
/// shutdown (so the HTTP server, shut down after it, has no response left open).
public struct HeartbeatService: Service {
    let hub: EventHub
    let interval: Duration

    /// Creates the service.
    public init(hub: EventHub, interval: Duration = .seconds(15)) {
        self.hub = hub
        self.interval = interval
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await Task.sleep(for: interval) } catch { break }
                hub.heartbeat()
            }
        }
        hub.close()
    }
}
