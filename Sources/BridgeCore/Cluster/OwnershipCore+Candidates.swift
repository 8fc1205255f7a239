extension OwnershipCore {
    /// The bridges that could own `device` now, best first: online, with fresh sightings (this bridge's own are
    /// always current) that hear it, and able to take it (a ``ClusterService/listen`` device, a link already up,
    /// or a free slot on the adapter they hear it with). Order: RSSI, strongest first (unknown last); ties: the id
    /// that sorts first.
    func candidates(for device: String, now: Instant) -> [Candidate] {
        let service = wanted[device] ?? .link
        var result: [Candidate] = []
        for (bridge, view) in sightings where isOnline(bridge) {
            if bridge != bridgeID, view.receivedAt.advanced(by: settings.sightingsStaleAfter) < now { continue }
            guard let heard = view.payload.devices[device] else { continue }
            let canTake: Bool
            if service == .listen || heard.connected {
                canTake = true
            } else if bridge == bridgeID {
                canTake = (view.payload.adapters[heard.adapter]?.freeSlots ?? 0) - reserved(on: heard.adapter, besides: device) > 0
            } else {
                canTake = view.payload.hasFreeSlot(on: heard.adapter)
            }
            if canTake { result.append(Candidate(bridge: bridge, adapter: heard.adapter, rssi: heard.rssi)) }
        }
        return result.sorted(by: Self.ranks)
    }

    /// The best of ``candidates(for:now:)``, optionally leaving this bridge out.
    func bestCandidate(for device: String, now: Instant, excludingSelf: Bool = false) -> Candidate? {
        candidates(for: device, now: now).first { !excludingSelf || $0.bridge != bridgeID }
    }

    /// Whether `lhs` is the better owner: stronger RSSI (known beats unknown), then the id that sorts first.
    static func ranks(_ lhs: Candidate, _ rhs: Candidate) -> Bool {
        switch (lhs.rssi, rhs.rssi) {
        case (let left?, let right?) where left != right: return left > right
        case (.some, nil): return true
        case (nil, .some): return false
        default: return BridgeID.sortsBefore(lhs.bridge, rhs.bridge)
        }
    }

    /// Slots on `adapter` this bridge has promised but its published sightings may not count yet: devices claimed
    /// and waiting for the claim wait, and devices served whose link is not reported connected. (Conservative: a
    /// link that is connecting may be counted twice; the runtime's slot queue has the last word anyway.)
    func reserved(on adapter: String, besides device: String) -> Int {
        let own = sightings[bridgeID]?.payload.devices ?? [:]
        var count = 0
        for (other, service) in wanted where other != device && service == .link {
            switch phases[other] ?? .idle {
            case .serving(let served):
                if served == adapter && own[other]?.connected != true { count += 1 }
            case .idle:
                if let view = owners[other], view.payload.bridge == bridgeID, view.payload.adapter == adapter { count += 1 }
            case .releasing:
                break
            }
        }
        return count
    }
}
