/// The connection life cycle of one wanted peripheral, as a pure state machine.
///
/// The runtime feeds it events (BlueZ signals, method replies, timer ticks)
/// with the current time and performs the actions it returns. Time is any
/// `InstantProtocol` (the runtime uses `ContinuousClock.Instant`, tests a fake).
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
    /// Timing of the machine.
    public struct Configuration: Sendable, Hashable {
        /// The first reconnect delay.
        public var initialDelay: Duration
        /// The largest reconnect delay.
        public var maxDelay: Duration
        /// Growth of the delay per failed attempt.
        public var multiplier: Double
        /// Relative jitter of each delay (0...1).
        public var jitter: Double
        /// How long a `Connect` may take before it is cancelled.
        public var connectTimeout: Duration
        /// How long to wait for `ServicesResolved` and the GATT objects.
        public var resolveTimeout: Duration
        /// How long subscribing may take.
        public var subscribeTimeout: Duration
        /// How long to wait for `Connected=false` after a disconnect or an aborted connect.
        public var disconnectTimeout: Duration
        /// A connection ready for this long resets the backoff.
        public var stablePeriod: Duration

        /// Creates a configuration.
        public init(
            initialDelay: Duration = .seconds(1),
            maxDelay: Duration = .seconds(60),
            multiplier: Double = 2,
            jitter: Double = 0.2,
            connectTimeout: Duration = .seconds(30),
            resolveTimeout: Duration = .seconds(20),
            subscribeTimeout: Duration = .seconds(20),
            disconnectTimeout: Duration = .seconds(5),
            stablePeriod: Duration = .seconds(30)
        ) {
            self.initialDelay = initialDelay
            self.maxDelay = maxDelay
            self.multiplier = multiplier
            self.jitter = jitter
            self.connectTimeout = connectTimeout
            self.resolveTimeout = resolveTimeout
            self.subscribeTimeout = subscribeTimeout
            self.disconnectTimeout = disconnectTimeout
            self.stablePeriod = stablePeriod
        }

        /// The defaults with the delays of the `reconnect` section.
        public init(reconnect: BridgeConfig.Reconnect) {
            self.init(initialDelay: reconnect.initialDelay, maxDelay: reconnect.maxDelay)
        }
    }

    /// Where the device is in its life cycle.
    public enum State: Sendable, Hashable {
        /// Not connecting: waiting for the device to be discovered or for a connect request.
        case idle
        /// `Connect` issued; cancelled at `deadline`.
        case connecting(deadline: Instant)
        /// Connected; waiting for `ServicesResolved` and the GATT objects until `deadline`.
        case resolving(deadline: Instant)
        /// Subscribing to notifications and reading initial values, until `deadline`.
        case subscribing(deadline: Instant)
        /// Connected and subscribed: the device is online.
        case ready(since: Instant)
        /// Waiting for `Connected=false` (after a disconnect or an aborted connect) until `deadline`.
        case disconnecting(deadline: Instant)
        /// Waiting before the next connection attempt.
        case backoff(until: Instant)
        /// Stopped for good (bridge shutting down or device forgotten).
        case stopped
    }

    /// What happened.
    public enum Event: Sendable, Hashable {
        /// The device object exists (appeared, or was found by a scan).
        case discovered
        /// Connect now (at start for known peripherals, on a reconnect request); skips a running backoff.
        case connectRequested
        /// `Connect` returned successfully (also for `AlreadyConnected`).
        case connectSucceeded
        /// `Connect` failed.
        case connectFailed(ConnectErrorClass)
        /// `Device1.Connected` changed.
        case connectedChanged(Bool)
        /// `Device1.ServicesResolved` changed.
        case servicesResolved(Bool)
        /// The device's GATT service and characteristic objects are present.
        case gattObjectsPresent
        /// Every characteristic is subscribed (and initially read).
        case subscribed
        /// Subscribing failed.
        case subscribeFailed
        /// A timer scheduled with ``Action/scheduleTick(at:)`` fired (stale ticks are ignored).
        case tick
        /// BlueZ removed the device object.
        case deviceRemoved
        /// Stop: disconnect and ignore everything from now on.
        case stopRequested
    }

    /// What the runtime must do, in order.
    public enum Action: Sendable, Hashable {
        /// Call `Device1.Connect` (or `Adapter1.ConnectDevice` when there is no device object).
        case connect
        /// Call `Device1.Disconnect` (also cancels a pending `Connect`).
        case disconnect
        /// Nothing to call: the machine waits for `Connected=false` (aborted connect).
        case waitForDisconnect
        /// Subscribe to the characteristics and read them; report ``Event/subscribed`` or ``Event/subscribeFailed``.
        case startSubscribing
        /// Publish `{base}/{device}/availability` (`online` for `true`).
        case publishAvailability(Bool)
        /// Deliver ``Event/tick`` at this time (replaces any earlier request).
        case scheduleTick(at: Instant)
    }

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
            return actions
        case .deviceRemoved:
            let actions: [Action] = isReady ? [.publishAvailability(false)] : []
            resetLinkFlags()
            state = .idle
            return actions
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
                failedAttempts += 1
                return [.disconnect] + enterDisconnecting(now: now)
            case .connectedChanged(false):
                return lostConnection(now: now)
            case .tick where now >= deadline:
                failedAttempts += 1
                return [.disconnect] + enterDisconnecting(now: now)
            default:
                break
            }

        case .subscribing(let deadline):
            switch event {
            case .subscribed:
                state = .ready(since: now)
                return [.publishAvailability(true)]
            case .subscribeFailed:
                failedAttempts += 1
                return [.disconnect] + enterDisconnecting(now: now)
            case .servicesResolved(false):
                return enterResolving(now: now)
            case .connectedChanged(false):
                return lostConnection(now: now)
            case .tick where now >= deadline:
                failedAttempts += 1
                return [.disconnect] + enterDisconnecting(now: now)
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
                return enterBackoff(now: now)
            case .tick where now >= deadline:
                return enterBackoff(now: now)
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

        case .stopped:
            break
        }
        return []
    }

    mutating func resetLinkFlags() {
        isConnected = false
        servicesResolved = false
        gattObjectsPresent = false
    }

    mutating func startConnecting(now: Instant) -> [Action] {
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

    mutating func enterDisconnecting(now: Instant) -> [Action] {
        let deadline = now.advanced(by: configuration.disconnectTimeout)
        state = .disconnecting(deadline: deadline)
        return [.scheduleTick(at: deadline)]
    }

    mutating func enterBackoff(now: Instant) -> [Action] {
        let until = now.advanced(by: backoff.next())
        state = .backoff(until: until)
        return [.scheduleTick(at: until)]
    }

    mutating func lostConnection(now: Instant) -> [Action] {
        resetLinkFlags()
        return enterBackoff(now: now)
    }
}
