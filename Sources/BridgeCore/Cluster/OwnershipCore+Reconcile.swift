extension OwnershipCore {
    /// Brings every wanted device in line with the views at `now` (idempotent: a second call returns nothing).
    mutating func reconcileAll(now: Instant) -> [ClusterAction] {
        guard let up = brokerUpSince else { return [] }
        let quiet = now < up.advanced(by: settings.startupQuiet)
        var actions: [ClusterAction] = []
        for device in wanted.keys.sorted() {
            noteHearing(device, now: now)
            if let until = claimsHeldUntil[device], until <= now { claimsHeldUntil[device] = nil }
            actions += reconcile(device, now: now, quiet: quiet || claimsHeldUntil[device] != nil)
        }
        // A claim takes one of this bridge's slots: tell the others at once, not in up to 5 s.
        if actions.contains(where: { if case .publishOwner(_, let bridge, _) = $0 { bridge == bridgeID } else { false } }) {
            actions.append(.publishSightings)
        }
        return actions
    }

    mutating func noteHearing(_ device: String, now: Instant) {
        if sightings[bridgeID]?.payload.devices[device] != nil || linked.contains(device) || lastHeard[device] == nil {
            lastHeard[device] = now
        }
    }

    mutating func reconcile(_ device: String, now: Instant, quiet: Bool) -> [ClusterAction] {
        switch phases[device] ?? .idle {
        case .releasing(let target):
            if linked.contains(device) && wanted[device] == .link { return [] }  // wait: the old link goes first
            phases[device] = nil
            challengers[device] = nil
            challengerPayloads[device] = nil
            // Someone else's claim came in meanwhile: the broker's order settled it, nothing to hand over.
            if let view = owners[device], view.payload.bridge != bridgeID { return [] }
            if let target, isOnline(target.bridge) {
                recordOwner(device: device, OwnerPayload(bridge: target.bridge, adapter: target.adapter, since: 0), now: now)
                return [.publishOwner(device: device, bridge: target.bridge, adapter: target.adapter)]
            }
            if target == nil {
                owners[device] = nil
                return [.clearOwner(device: device)]
            }
            // The chosen bridge went offline meanwhile: the topic still names this bridge; decide afresh.
            return reconcile(device, now: now, quiet: quiet)
        case .serving(let adapter):
            return keepOrHandOver(device, adapter: adapter, now: now)
        case .idle:
            return idle(device, now: now, quiet: quiet)
        }
    }

    mutating func idle(_ device: String, now: Instant, quiet: Bool) -> [ClusterAction] {
        if let view = owners[device], isOnline(view.payload.bridge) {
            guard view.payload.bridge == bridgeID, !quiet, view.namedSince.advanced(by: settings.claimWait) <= now
            else { return [] }
            // Named for the claim wait: ours (our claim won, a handover to us, or our retained claim survived).
            let adapter = sightings[bridgeID]?.payload.devices[device]?.adapter ?? view.payload.adapter
            phases[device] = .serving(adapter: adapter)
            lastHeard[device] = now
            return [.serve(device: device, adapter: adapter)]
        }
        guard !quiet, let best = bestCandidate(for: device, now: now), best.bridge == bridgeID else { return [] }
        recordOwner(device: device, OwnerPayload(bridge: bridgeID, adapter: best.adapter, since: 0), now: now)
        return [.publishOwner(device: device, bridge: bridgeID, adapter: best.adapter)]
    }

    mutating func keepOrHandOver(_ device: String, adapter: String, now: Instant) -> [ClusterAction] {
        guard let view = owners[device] else {
            // The topic was emptied under us (a stray client): restore it, the link is ours.
            recordOwner(device: device, OwnerPayload(bridge: bridgeID, adapter: adapter, since: 0), now: now)
            return [.publishOwner(device: device, bridge: bridgeID, adapter: adapter)]
        }
        guard view.payload.bridge == bridgeID else {
            // The broker's order gave it to another bridge: stop at once.
            phases[device] = nil
            challengers[device] = nil
            challengerPayloads[device] = nil
            return [.stopServing(device: device)]
        }
        if let heard = lastHeard[device], heard.advanced(by: settings.releaseAfter) <= now {
            return release(device, to: bestCandidate(for: device, now: now, excludingSelf: true), now: now)
        }
        let own = sightings[bridgeID]?.payload.devices[device]
        let incumbent: SwitchRule.Incumbent =
            if let own { own.rssi.map { .heard($0) } ?? .heardUnknownStrength } else if linked.contains(device) {
                .heardUnknownStrength
            } else { .notHeard }
        let qualifying = candidates(for: device, now: now).filter { candidate in
            candidate.bridge != bridgeID && candidate.rssi.map { settings.switchRule.isStronger($0, than: incumbent) } == true
        }
        var timer = challengers[device] ?? SwitchTimer()
        // A challenger whose sightings lapsed (no payload for longer than the staleness limit) between two
        // observations starts over: "stronger for switch_after" needs an unbroken run of fresh payloads.
        var seen = challengerPayloads[device] ?? [:]
        for candidate in qualifying {
            let received = sightings[candidate.bridge]?.receivedAt
            if let previous = seen[candidate.bridge], let received,
                previous.advanced(by: settings.sightingsStaleAfter) < received
            {
                timer.forget(candidate.bridge)
            }
            seen[candidate.bridge] = received
        }
        challengerPayloads[device] = seen.filter { key, _ in qualifying.contains { $0.bridge == key } }
        let matured = timer.observe(
            qualifying: Set(qualifying.map(\.bridge)), now: now, after: settings.switchRule.after)
        challengers[device] = timer
        guard let target = qualifying.first(where: { matured.contains($0.bridge) }) else { return [] }
        return release(device, to: target, now: now)
    }

    /// Rule 3: stop serving, and once no link is left publish the owner topic naming `target` (empty it when `nil`).
    mutating func release(_ device: String, to target: Candidate?, now: Instant) -> [ClusterAction] {
        phases[device] = .releasing(to: target)
        challengers[device] = nil
        challengerPayloads[device] = nil
        // With no link to wait for, the handover goes on in the same step.
        return [.stopServing(device: device)] + reconcile(device, now: now, quiet: false)
    }
}
