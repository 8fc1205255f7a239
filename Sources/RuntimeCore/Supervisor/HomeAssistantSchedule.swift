import BridgeCore

/// When Home Assistant discovery waits and when the last values are sent again: the
/// ``SupervisorCore``'s timers for the ``HomeAssistantPublisher``, which only publishes.
///
/// Device configs wait ``HomeAssistantTiming/legacyWindow`` after the first broker
/// connection (the broker is still sending the retained per-entity configs of earlier versions,
/// which must be cleared first). The last values are sent again
/// ``HomeAssistantTiming/resendDelay`` after configs went out: Home Assistant subscribes an
/// entity's state topic only once it has processed the config.
package struct HomeAssistantSchedule<Instant: InstantProtocol>: Sendable, Equatable where Instant.Duration == Duration {
    /// The first republish (broker connection) of the run started the window.
    package private(set) var startedHolding = false
    /// Until then device configs are held.
    package private(set) var holdUntil: Instant?
    /// When the last values are sent again.
    package private(set) var resendAt: Instant?
    /// Of which devices (segments), unless ``resendAll``.
    package private(set) var resendDevices: Set<String> = []
    package private(set) var resendAll = false

    /// The earliest of the timers.
    package var nextDeadline: Instant? { [holdUntil, resendAt].compactMap { $0 }.min() }

    /// Whether device configs are held at `now`.
    package func holds(at now: Instant) -> Bool { holdUntil.map { now < $0 } ?? false }

    /// Every config is published again: the first time, the hold window starts (the result:
    /// whether it did); every value follows.
    package mutating func republish(now: Instant) -> Bool {
        defer { sent(devices: nil, now: now) }
        guard !startedHolding else { return false }
        startedHolding = true
        holdUntil = now.advanced(by: HomeAssistantTiming.legacyWindow)
        return true
    }

    /// Configs went out: these devices' last values (nil: every device's) follow ``HomeAssistantTiming/resendDelay`` later.
    package mutating func sent(devices: Set<String>?, now: Instant) {
        if let devices { resendDevices.formUnion(devices) } else { resendAll = true }
        resendAt = now.advanced(by: HomeAssistantTiming.resendDelay)
    }

    /// Whether the hold window ended at `now` (once).
    package mutating func releaseDue(now: Instant) -> Bool {
        guard let until = holdUntil, until <= now else { return false }
        holdUntil = nil
        return true
    }

    /// The devices whose last values are due at `now` (nil inside: every device), clearing the
    /// schedule; nil when nothing is due.
    package mutating func resendDue(now: Instant) -> Set<String>?? {
        guard let at = resendAt, at <= now else { return nil }
        defer {
            resendAt = nil
            resendAll = false
            resendDevices = []
        }
        return .some(resendAll ? nil : resendDevices)
    }
}

/// The waits of Home Assistant discovery (``HomeAssistantSchedule``).
package enum HomeAssistantTiming {
    /// How long device configs wait after the first broker connection (the broker is still sending the
    /// retained per-entity configs of earlier versions, which must be cleared first).
    package static let legacyWindow: Duration = .seconds(1)
    /// How long after a config the last values are sent again (Home Assistant subscribes an entity's
    /// state topic only once it has processed the config).
    package static let resendDelay: Duration = .seconds(2)
}
