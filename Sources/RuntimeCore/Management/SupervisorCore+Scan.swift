import BridgeCore

/// The `scan` request (SPEC §14): every advertiser heard in a window of 1–60 s, while the bridge keeps serving. The
/// scan runs on every ready adapter for the window (also where no peripheral is missing); the executor notes the
/// advertisers and assembles the answer (``Action/answerScan(_:since:)``).
extension SupervisorCore {
    /// A `scan` request under way.
    package struct PendingScan: Sendable {
        /// When it is answered.
        package var until: Instant
        /// Since when it listens.
        package var since: Instant
        /// Its answer (command, transaction).
        package var response: Response
    }

    /// The longest and the default window of a `scan` request.
    package static var scanSeconds: (default: Int, range: ClosedRange<Int>) { (10, 1...60) }

    /// A `scan` request: starts its window (and the scan on every ready adapter), or answers `invalid_payload`.
    mutating func scanRequest(_ request: JSONValue, _ response: inout Response, now: Instant, tree: Tree, _ out: inout [Action]) -> Bool {
        var seconds = Self.scanSeconds.default
        if let given = request["seconds"], !given.isNull {
            guard let whole = given.int64Value, Self.scanSeconds.range.contains(Int(clamping: whole)) else {
                response.fail(.invalidPayload, "'seconds' must be a whole number from 1 to 60, not \(given.jsonString)")
                return false
            }
            seconds = Int(whole)
        }
        if scans.isEmpty { out.append(.scanStarted) }
        let filter = discoveryFilter
        scans.append(PendingScan(until: now.advanced(by: .seconds(seconds)), since: now, response: response))
        refreshDiscoveryFilter(from: filter, &out)
        out.append(.log(.info, "scan request: listening to every advertiser for \(seconds) s"))
        updateDiscovery(tree: tree, &out)
        return true
    }

    /// Answers the scans whose window is over.
    mutating func answerScans(now: Instant, tree: Tree, _ out: inout [Action]) {
        guard scans.contains(where: { $0.until <= now }) else { return }
        for scan in scans where scan.until <= now { out.append(.answerScan(scan.response, since: scan.since)) }
        let filter = discoveryFilter
        scans.removeAll { $0.until <= now }
        guard scans.isEmpty else { return }
        out.append(.scanFinished)
        refreshDiscoveryFilter(from: filter, &out)
        updateDiscovery(tree: tree, &out)
    }
}
