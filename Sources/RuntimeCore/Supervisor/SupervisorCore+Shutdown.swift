import BridgeCore

/// The shutdown (``SupervisorCore/Event/stop``): `offline` published, every session told to stop, the scan stopped;
/// then only the sessions' ends count, until every session ended or ``SupervisorCore/stopTimeout`` passed (a wedged
/// adapter or a bus gone must not hold the exit).
extension SupervisorCore {
    /// Starts the shutdown: `offline`, every session told to stop, the scan stopped.
    mutating func beginShutdown(now: Instant, _ out: inout [Action]) {
        stopping = true
        shutdownDeadline = now.advanced(by: Self.stopTimeout)
        out.append(.log(.info, "shutting down"))
        out.append(.publishBridgeState(online: false))
        for path in sessions.sorted() { out.append(.send(path: path, .stop)) }
        for name in radios.keys.sorted() where radios[name]?.discovery.ours == true {
            out.append(.stopDiscovery(adapter: name))
        }
    }

    /// Waits for the sessions to stop notifications and disconnect, at most ``stopTimeout``;
    /// then gives up on them (a wedged adapter or a bus gone must not hold the exit).
    mutating func handleWhileStopping(_ event: Event, now: Instant, _ out: inout [Action]) {
        guard !finished else { return }
        switch event {
        case .sessionEnded(let path):
            sessionEnded(path)
            out.append(.log(.debug, "the session of \(path) ended"))
            if removeRecord(path) != nil { out.append(.unregister(path: path)) }
            if sessions.isEmpty { finish(&out) }
        case .tick where shutdownDeadline.map { $0 <= now } ?? false, .inboxClosed:
            giveUp(&out)
        default:
            break
        }
    }

    /// Gives up on the sessions still running.
    mutating func giveUp(_ out: inout [Action]) {
        guard !finished else { return }
        if !sessions.isEmpty {
            out.append(.log(.notice, "\(sessions.count) devices did not disconnect in time; going on"))
        }
        finish(&out)
    }

    /// The shutdown is over: the executor stops following BlueZ and ends its loop.
    mutating func finish(_ out: inout [Action]) {
        finished = true
        out.append(.finishShutdown)
    }
}
