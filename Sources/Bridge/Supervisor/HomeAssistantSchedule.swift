import BridgeCore

/// When Home Assistant discovery waits and when the last values are sent again: the
/// ``SupervisorCore``'s timers for the ``HomeAssistantPublisher``, which only publishes.
///
/// Device configs wait ``HomeAssistantPublisher/legacyWindow`` after the first broker
/// connection (the broker is still sending the retained per-entity configs of earlier versions,
/// which must be cleared first). The last values are sent again
/// ``HomeAssistantPublisher/resendDelay`` after configs went out: Home Assistant subscribes an
/// entity's state topic only once it has processed the config.
struct HomeAssistantSchedule: Sendable, Equatable {
    /// The first republish (broker connection) of the run started the window.
    private(set) var startedHolding = false
    /// Until then device configs are held.
    private(set) var holdUntil: BridgeInstant?
    /// When the last values are sent again.
    private(set) var resendAt: BridgeInstant?
    /// Of which devices (segments), unless ``resendAll``.
    private(set) var resendDevices: Set<String> = []
    private(set) var resendAll = false

    /// The earliest of the timers.
    var nextDeadline: BridgeInstant? { [holdUntil, resendAt].compactMap { $0 }.min() }

    /// Whether device configs are held at `now`.
    func holds(at now: BridgeInstant) -> Bool { holdUntil.map { now < $0 } ?? false }

    /// Every config is published again: the first time, the hold window starts (the result:
    /// whether it did); every value follows.
    mutating func republish(now: BridgeInstant) -> Bool {
        defer { sent(devices: nil, now: now) }
        guard !startedHolding else { return false }
        startedHolding = true
        holdUntil = now.advanced(by: HomeAssistantPublisher.legacyWindow)
        return true
    }

    /// Configs went out: these devices' last values (nil: every device's) follow ``HomeAssistantPublisher/resendDelay`` later.
    mutating func sent(devices: Set<String>?, now: BridgeInstant) {
        if let devices { resendDevices.formUnion(devices) } else { resendAll = true }
        resendAt = now.advanced(by: HomeAssistantPublisher.resendDelay)
    }

    /// Whether the hold window ended at `now` (once).
    mutating func releaseDue(now: BridgeInstant) -> Bool {
        guard let until = holdUntil, until <= now else { return false }
        holdUntil = nil
        return true
    }

    /// The devices whose last values are due at `now` (nil inside: every device), clearing the
    /// schedule; nil when nothing is due.
    mutating func resendDue(now: BridgeInstant) -> Set<String>?? {
        guard let at = resendAt, at <= now else { return nil }
        defer {
            resendAt = nil
            resendAll = false
            resendDevices = []
        }
        return .some(resendAll ? nil : resendDevices)
    }
}
