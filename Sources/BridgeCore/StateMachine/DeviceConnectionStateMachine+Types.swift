extension DeviceConnectionStateMachine {
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
        /// Whether connection attempts need a connection slot (``Action/requestSlot``,
        /// ``Event/slotGranted``): `bluetooth.max_connections`, SPEC §6. Off, the machine connects
        /// at once.
        public var usesSlots: Bool = false

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
        public init(reconnect: BridgeConfig.Reconnect, usesSlots: Bool = false) {
            self.init(initialDelay: reconnect.initialDelay, maxDelay: reconnect.maxDelay)
            self.usesSlots = usesSlots
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
        /// Waiting for a connection slot (``Configuration/usesSlots``) before connecting.
        case waitingForSlot
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
        /// A connection slot was granted (after ``Action/requestSlot``).
        case slotGranted
        /// Disconnect and stay idle, without retrying (end of a poll cycle, SPEC §6); a waiting
        /// slot request or a backoff ends.
        case releaseRequested
        /// Let a link up or coming go and connect again no sooner than this (a failed pairing, SPEC §11): the
        /// backoff ends then at the earliest. ``connectRequested`` (a reconnect request) lifts it.
        case holdOff(until: Instant)
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
        /// Ask for a connection slot; report ``Event/slotGranted`` when it is granted.
        case requestSlot
        /// Give the connection slot back (or leave the queue for one).
        case releaseSlot
    }
}
