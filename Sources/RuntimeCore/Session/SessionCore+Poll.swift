import BridgeCore

extension SessionCore {
    /// `poll_interval` and `listen` of a poll device.
    package var pollSettings: (interval: Duration, listen: Duration) {
        if case .poll(let interval, let listen) = device.policy { return (interval, listen) }
        return (.seconds(60), .zero)
    }

    /// Moves a poll device's cycle on (SPEC §6): start a cycle when it is due, finish it when the
    /// reads are done (then listen, if configured), give it up after the usual retries.
    package mutating func advanceCycle(_ s: inout Step) {
        let (interval, listen) = pollSettings
        switch cycle.phase {
        case .waiting:
            guard let next = cycle.nextAt, next <= s.now else { return }
            // A link still going down (the last cycle's) must be down before the next connect.
            guard machine.state == .idle || machine.isReady else { return }
            cycle.nextAt = next.advanced(by: interval) > s.now ? next.advanced(by: interval) : s.now.advanced(by: interval)
            cycle.phase = .running(startedAt: s.now, failuresAtStart: machine.failedAttempts)
            s.log(.info, "poll cycle: connecting to \(device.address)")
            if machine.isReady {
                // Connected on demand: read now.
                enqueueSetup(Array(characteristics.values).sorted { $0.path < $1.path }, onlyNew: true, runsProfile: true, &s)
            } else {
                feed(.connectRequested, &s)
            }
        case .running(let startedAt, let failuresAtStart):
            if machine.isReady && !(link?.setup.running ?? false) && (link?.setup.operations.isEmpty ?? true) && queue.run == nil {
                s.log(.info, "poll cycle done")
                setAvailable(true, &s)
                cycle.phase = listen > .zero ? .listening(until: s.now.advanced(by: listen)) : .waiting
            } else if machine.failedAttempts - failuresAtStart >= timing.pollCycleAttempts
                        || (startedAt.duration(to: s.now) >= interval && !machine.isConnected) {
                // Not while a link is up: its setup (a profile's steps, the grace for missing GATT objects) has the
                // machine's own deadlines, which may be longer than a short interval.
                s.log(.warning, "poll cycle failed after \(machine.failedAttempts - failuresAtStart) attempts; next in \(cycle.nextAt.map { s.now.duration(to: $0) } ?? interval)")
                setAvailable(false, &s)
                cycle.phase = .waiting
                feed(.releaseRequested, &s)
            }
        case .listening(let until):
            if until <= s.now || !machine.isConnected { cycle.phase = .waiting }
        }
    }

    /// Connects a poll device on demand for commands, and lets it go once no command is queued or
    /// running and no cycle needs it.
    package mutating func steerPollConnection(_ s: inout Step) {
        guard cycle.phase == .waiting, !ended else { return }
        if queue.commandCount > 0 {
            // Not while a failed pairing's delay runs (SPEC §11): the commands wait for their deadline.
            if machine.state == .idle, !pairingRetry.holds(at: s.now) {
                s.log(.info, "connecting on demand for \(queue.commandCount) command(s)")
                feed(.connectRequested, &s)
            }
            return
        }
        guard !queue.busy, !machine.releasing else { return }
        switch machine.state {
        case .idle, .stopped, .disconnecting:
            return
        default:
            feed(.releaseRequested, &s)
        }
    }
}
