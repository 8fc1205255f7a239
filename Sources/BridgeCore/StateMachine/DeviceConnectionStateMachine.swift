/// The connection life cycle of one wanted peripheral, as a pure state machine.
///
/// The runtime feeds it events (BlueZ signals, method replies, timer ticks)
/// with the current time and performs the actions it returns. Time is any
/// `InstantProtocol` (the runtime uses `BridgeInstant`, tests a fake).
///
/// ```
/// idle ──discovered/connectRequested──▶ connecting ──connectSucceeded──▶ resolving
///   ▲                                      │  ▲                            │ ServicesResolved
///   │ deviceRemoved                 failed │  │ tick                       │ + GATT objects
///   │                                      ▼  │                            ▼
///   └──────────────────────────────── backoff(until:) ◀──Connected=false── subscribing
///                                          ▲                               │ subscribed
///                                          │                               ▼
///                       disconnecting ─────┘ ◀──resolve/subscribe timeout  ready
/// ```
///
/// - Resolving waits for `ServicesResolved` *and* the GATT objects; after
///   ``Configuration/resolveTimeout`` it disconnects and retries.
/// - A `le-connection-abort-by-local` failure while `Connected` is true waits
///   for `Connected=false` before the backoff starts.
/// - Backoff grows exponentially with jitter between the configured delays and
///   starts over after a connection that was ready for ``Configuration/stablePeriod``.
public struct DeviceConnectionStateMachine<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// The timing.
    public let configuration: Configuration
    /// The current state.
    public private(set) var state: State = .idle
    /// The last known `Device1.Connected`.
    public private(set) var isConnected = false
    /// The last known `Device1.ServicesResolved`.
    public private(set) var servicesResolved = false
    /// Whether the GATT objects have been reported present since the last disconnect.
    public private(set) var gattObjectsPresent = false
    /// Failed connection attempts since the last stable connection.
    public private(set) var failedAttempts = 0
    /// The reconnect delays.
    public private(set) var backoff: Backoff
    /// Whether the machine holds a connection slot (or has asked for one).
    public private(set) var hasSlot = false
    /// Whether the disconnect under way ends in ``State/idle`` (``Event/releaseRequested``).
    public private(set) var releasing = false
    /// No connection attempt before this (``Event/holdOff(until:)``); cleared by the next attempt.
    public private(set) var heldUntil: Instant?

    /// Creates a machine in ``State/idle``; `seed` fixes the jitter sequence.
    public init(configuration: Configuration = Configuration(), seed: UInt64) {
        self.configuration = configuration
        self.backoff = Backoff(
            initial: configuration.initialDelay, maximum: configuration.maxDelay,
            multiplier: configuration.multiplier, jitter: configuration.jitter, seed: seed)
    }

    /// Whether the device is ``State/ready``.
    public var isReady: Bool {
        if case .ready = state { return true }
        return false
    }

    /// Handles one event at time `now` and returns the actions to perform, in order.
    public mutating func handle(_ event: Event, now: Instant) -> [Action] {
        if case .stopped = state { return [] }
        switch event {
        case .stopRequested:
            var actions: [Action] = []
            if isReady { actions.append(.publishAvailability(false)) }
            switch state {
            case .connecting, .resolving, .subscribing, .ready:
                actions.append(.disconnect)
            default:
                if isConnected { actions.append(.disconnect) }
            }
            state = .stopped
            return actions + dropSlot()
        case .deviceRemoved:
            let actions: [Action] = isReady ? [.publishAvailability(false)] : []
            resetLinkFlags()
            state = .idle
            releasing = false
            return actions + dropSlot()
        case .releaseRequested:
            return release(now: now)
        case .holdOff(let until):
            return holdOff(until: until, now: now)
        case .connectRequested:
            heldUntil = nil
        case .slotGranted:
            guard case .waitingForSlot = state else {
                // Granted after the wait ended: give it back unless a link is up.
                return isConnected ? [] : dropSlotIfIdle()
            }
            state = .idle
            return startConnecting(now: now)
        case .servicesResolved(let resolved):
            servicesResolved = resolved
        case .gattObjectsPresent:
            gattObjectsPresent = true
        default:
            break
        }

        switch state {
        case .idle:
            switch event {
            case .discovered, .connectRequested:
                return startConnecting(now: now)
            case .connectedChanged(true):
                isConnected = true
                return enterResolving(now: now)
            case .connectedChanged(false):
                resetLinkFlags()
            default:
                break
            }

        case .connecting(let deadline):
            switch event {
            case .connectSucceeded, .connectedChanged(true):
                isConnected = true
                return enterResolving(now: now)
            case .connectFailed(.inProgress):
                // Another attempt is running: back off briefly and try again; if that attempt
                // brings Connected=true meanwhile, the backoff state goes on to resolving.
                failedAttempts += 1
                return enterBackoff(now: now)
            case .connectFailed(.abortByLocal):
                failedAttempts += 1
                if isConnected {
                    return [.waitForDisconnect] + enterDisconnecting(now: now)
                }
                return enterBackoff(now: now)
            case .connectFailed(.notFound):
                failedAttempts += 1
                resetLinkFlags()
                state = .idle
                return dropSlot()
            case .connectFailed(.other):
                failedAttempts += 1
                return enterBackoff(now: now)
            case .connectedChanged(false):
                isConnected = false
            case .tick where now >= deadline:
                failedAttempts += 1
                return [.disconnect] + enterBackoff(now: now)
            default:
                break
            }

        case .resolving(let deadline):
            switch event {
            case .servicesResolved, .gattObjectsPresent:
                if servicesResolved && gattObjectsPresent { return enterSubscribing(now: now) }
            case .connectFailed(.abortByLocal):
                // Connected=true came first, then Connect failed: wait for Connected=false.
                failedAttempts += 1
                return [.waitForDisconnect] + enterDisconnecting(now: now)
            case .connectFailed(.other):
                return failAttempt(now: now)
            case .connectedChanged(false):
                return lostConnection(now: now)
            case .tick where now >= deadline:
                return failAttempt(now: now)
            default:
                break
            }

        case .subscribing(let deadline):
            switch event {
            case .subscribed:
                state = .ready(since: now)
                return [.publishAvailability(true)]
            case .subscribeFailed:
                return failAttempt(now: now)
            case .servicesResolved(false):
                return enterResolving(now: now)
            case .connectedChanged(false):
                return lostConnection(now: now)
            case .tick where now >= deadline:
                return failAttempt(now: now)
            default:
                break
            }

        case .ready(let since):
            switch event {
            case .connectedChanged(false):
                if since.duration(to: now) >= configuration.stablePeriod {
                    backoff.reset()
                    failedAttempts = 0
                }
                return [.publishAvailability(false)] + lostConnection(now: now)
            case .servicesResolved(false):
                // Services changed: the GATT objects are rebuilt; subscribe again once resolved.
                gattObjectsPresent = false
                return [.publishAvailability(false)] + enterResolving(now: now)
            default:
                break
            }

        case .disconnecting(let deadline):
            switch event {
            case .connectedChanged(false):
                resetLinkFlags()
                return releasing ? enterIdle() : enterBackoff(now: now)
            case .tick where now >= deadline:
                return releasing ? enterIdle() : enterBackoff(now: now)
            default:
                break
            }

        case .backoff(let until):
            switch event {
            case .tick where now >= until, .connectRequested:
                return startConnecting(now: now)
            case .connectedChanged(true):
                isConnected = true
                return enterResolving(now: now)
            case .connectedChanged(false):
                resetLinkFlags()
            default:
                break
            }

        case .waitingForSlot:
            switch event {
            case .connectedChanged(true):
                // Someone else connected it: use the link.
                isConnected = true
                return enterResolving(now: now)
            default:
                break
            }

        case .stopped:
            break
        }
        return []
    }

    /// ``Event/releaseRequested``: disconnect if a link is up or coming, else go idle at once.
    mutating func release(now: Instant) -> [Action] {
        switch state {
        case .connecting, .resolving, .subscribing, .ready:
            let actions: [Action] = isReady ? [.publishAvailability(false)] : []
            releasing = true
            return actions + [.disconnect] + enterDisconnecting(now: now)
        case .disconnecting:
            releasing = true
            return []
        case .idle, .backoff, .waitingForSlot:
            if isConnected {
                releasing = true
                return [.disconnect] + enterDisconnecting(now: now)
            }
            return enterIdle()
        case .stopped:
            return []
        }
    }

    /// ``Event/holdOff(until:)``: a link up or coming is let go (the backoff after it lasts until `until`); without
    /// one, the backoff starts now.
    mutating func holdOff(until: Instant, now: Instant) -> [Action] {
        heldUntil = max(heldUntil ?? until, until)
        switch state {
        case .connecting, .resolving, .subscribing, .ready:
            let actions: [Action] = isReady ? [.publishAvailability(false)] : []
            return actions + [.disconnect] + enterDisconnecting(now: now)
        case .disconnecting:
            return []
        case .idle, .backoff, .waitingForSlot:
            if isConnected { return [.disconnect] + enterDisconnecting(now: now) }
            return enterBackoff(now: now)
        case .stopped:
            return []
        }
    }

    mutating func enterIdle() -> [Action] {
        resetLinkFlags()
        releasing = false
        state = .idle
        return dropSlot()
    }

    /// Gives the slot back if the machine holds one.
    mutating func dropSlot() -> [Action] {
        guard hasSlot else { return [] }
        hasSlot = false
        return [.releaseSlot]
    }

    mutating func dropSlotIfIdle() -> [Action] {
        switch state {
        case .idle, .backoff, .stopped: return [.releaseSlot]
        default: return []
        }
    }

    mutating func resetLinkFlags() {
        isConnected = false
        servicesResolved = false
        gattObjectsPresent = false
    }

    mutating func startConnecting(now: Instant) -> [Action] {
        if configuration.usesSlots && !hasSlot {
            if case .waitingForSlot = state { return [] }
            state = .waitingForSlot
            hasSlot = true  // asked for: a release leaves the queue
            return [.requestSlot]
        }
        releasing = false
        heldUntil = nil
        let deadline = now.advanced(by: configuration.connectTimeout)
        state = .connecting(deadline: deadline)
        return [.connect, .scheduleTick(at: deadline)]
    }

    mutating func enterResolving(now: Instant) -> [Action] {
        if servicesResolved && gattObjectsPresent { return enterSubscribing(now: now) }
        let deadline = now.advanced(by: configuration.resolveTimeout)
        state = .resolving(deadline: deadline)
        return [.scheduleTick(at: deadline)]
    }

    mutating func enterSubscribing(now: Instant) -> [Action] {
        let deadline = now.advanced(by: configuration.subscribeTimeout)
        state = .subscribing(deadline: deadline)
        return [.startSubscribing, .scheduleTick(at: deadline)]
    }

    /// An attempt failed with a link (or half of one) up: counted, the link is dropped, and the machine waits for it to go.
    mutating func failAttempt(now: Instant) -> [Action] {
        failedAttempts += 1
        return [.disconnect] + enterDisconnecting(now: now)
    }

    mutating func enterDisconnecting(now: Instant) -> [Action] {
        let deadline = now.advanced(by: configuration.disconnectTimeout)
        state = .disconnecting(deadline: deadline)
        return [.scheduleTick(at: deadline)]
    }

    mutating func enterBackoff(now: Instant) -> [Action] {
        // A failed pairing's delay replaces the reconnect delay (which does not grow for it).
        let until = heldUntil.flatMap { $0 > now ? $0 : nil } ?? now.advanced(by: backoff.next())
        state = .backoff(until: until)
        return dropSlot() + [.scheduleTick(at: until)]
    }

    mutating func lostConnection(now: Instant) -> [Action] {
        resetLinkFlags()
        return enterBackoff(now: now)
    }
}
