import BridgeCore

extension SessionCore {
    /// `poll_interval` and `listen` of a poll device.
    package var pollSettings: (interval: Duration, listen: Duration) {
        if case .poll(let interval, let listen) = device.policy { return (interval, listen) }
        return (.seconds(60), .zero)
    }

    /// Moves a poll device's cycle on (SPEC §6): start a cycle when it is due, finish it when the
    /// reads are done (then listen, if configured), give it up after the usual retries.
    package mutating func advanceCycle() {
        let (interval, listen) = pollSettings
        switch cycle.phase {
        case .waiting:
            guard let next = cycle.nextAt, next <= now else { return }
            // A link still going down (the last cycle's) must be down before the next connect.
            guard machine.state == .idle || machine.isReady else { return }
            cycle.nextAt = next.advanced(by: interval) > now ? next.advanced(by: interval) : now.advanced(by: interval)
            cycle.phase = .running(startedAt: now, failuresAtStart: machine.failedAttempts)
            log(.info, "poll cycle: connecting to \(device.address)")
            if machine.isReady {
                // Connected on demand: read now.
                enqueueSetup(Array(characteristics.values).sorted { $0.path < $1.path }, onlyNew: true)
            } else {
                feed(.connectRequested)
            }
        case .running(let startedAt, let failuresAtStart):
            if machine.isReady && !setupRunning && setupQueue.isEmpty {
                log(.info, "poll cycle done")
                setAvailable(true)
                cycle.phase = listen > .zero ? .listening(until: now.advanced(by: listen)) : .waiting
            } else if machine.failedAttempts - failuresAtStart >= timing.pollCycleAttempts
                        || startedAt.duration(to: now) >= interval {
                log(.warning, "poll cycle failed after \(machine.failedAttempts - failuresAtStart) attempts; next in \(cycle.nextAt.map { now.duration(to: $0) } ?? interval)")
                setAvailable(false)
                cycle.phase = .waiting
                feed(.releaseRequested)
            }
        case .listening(let until):
            if until <= now || !machine.isConnected { cycle.phase = .waiting }
        }
    }

    /// Connects a poll device on demand for commands, and lets it go once no command is queued or
    /// running and no cycle needs it.
    package mutating func steerPollConnection() {
        guard cycle.phase == .waiting, !ended else { return }
        if commandCount > 0 {
            // Not while a failed pairing's delay runs (SPEC §11): the commands wait for their deadline.
            if machine.state == .idle, !pairingRetry.holds(at: now) {
                log(.info, "connecting on demand for \(commandCount) command(s)")
                feed(.connectRequested)
            }
            return
        }
        guard !inFlight, !machine.releasing else { return }
        switch machine.state {
        case .idle, .stopped, .disconnecting:
            return
        default:
            feed(.releaseRequested)
        }
    }
}
