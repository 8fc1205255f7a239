import BridgeCore

/// A device profile's steps running in the session's GATT queue (SPEC §15): the connection steps of a link, or a
/// named command. One queue item that spans several BlueZ calls: nothing else starts while it runs (``GattQueue``'s
/// `busy`), and every call carries the connection attempt it was sent for.
package struct ProfileRun<Instant: InstantProtocol>: Sendable where Instant.Duration == Duration {
    /// Why the steps run.
    package enum Purpose: Sendable {
        /// The steps of every connection, part of the link's setup.
        case connection
        /// A named command (``PendingCommand/profileCommand``).
        case command(PendingCommand<Instant>, ProfileCommand)
    }

    /// What the run waits for before its next step.
    package enum Waiting: Sendable {
        /// A BlueZ call of step ``ProfileRun/index`` (the queue's `inFlight` is set).
        case call
        /// The next notification of the characteristic at `path` (`wait_notify`), by `until`.
        case notify(path: String, until: Instant)
        /// The command's answer: the next notification of `path`, by `until`.
        case expect(path: String, until: Instant)
        /// A `sleep` step, until `until`.
        case sleep(until: Instant)
    }

    /// Notifications buffered per path while armed, at most this many (the oldest dropped).
    package static var bufferLimit: Int { 8 }

    package var purpose: Purpose
    /// The steps, already selected by the device's options.
    package var steps: [ProfileStep]
    /// The step running (or the next one, while ``waiting`` is nil).
    package var index = 0
    /// What the run waits for (nil: the next step may start).
    package var waiting: Waiting?
    /// Characteristic paths whose notifications come to the session (not to the router's decode) during the run.
    package var armed: Set<String> = []
    /// Notifications of armed paths not taken by a wait yet, per path, oldest first.
    package var notified: [String: [[UInt8]]] = [:]
    /// The command's parameters (its JSON payload's members but `transaction`).
    package var parameters: [String: JSONValue] = [:]
    /// The command's deadline answered it already (`timeout`): no further call is sent.
    package var answered = false
    /// Notifications the command's `expect` does not list, while it waits for one it does (a device's late frames
    /// of an earlier query come first: an AM43 answers a position query with three): reported as
    /// `unexpected_answer` if no listed one comes in time.
    package var unlisted: [[UInt8]] = []

    /// A run of `steps` for `purpose`.
    package init(purpose: Purpose, steps: [ProfileStep], parameters: [String: JSONValue] = [:]) {
        self.purpose = purpose
        self.steps = steps
        self.parameters = parameters
    }

    /// The command it runs, if it runs one.
    package var command: PendingCommand<Instant>? {
        if case .command(let c, _) = purpose { return c }
        return nil
    }

    /// The step running, if any.
    package var step: ProfileStep? { index < steps.count ? steps[index] : nil }

    /// When the run's wait ends (nil: not waiting for a time).
    package var deadline: Instant? {
        switch waiting {
        case .notify(_, let until), .expect(_, let until), .sleep(let until): until
        case .call, nil: nil
        }
    }

    /// Keeps a notification of an armed path for a later wait (the oldest dropped beyond ``bufferLimit``); returns
    /// whether one was dropped.
    package mutating func buffer(_ value: [UInt8], path: String) -> Bool {
        notified[path, default: []].append(value)
        guard notified[path]!.count > Self.bufferLimit else { return false }
        notified[path]!.removeFirst()
        return true
    }

    /// The oldest buffered notification of `path`, taken.
    package mutating func take(_ path: String) -> [UInt8]? {
        guard let first = notified[path]?.first else { return nil }
        notified[path]!.removeFirst()
        return first
    }

    /// `step N (line L, kind)` for log lines and errors.
    package var stepDescription: String {
        guard let step else { return "after the last step" }
        return "step \(index + 1) (\(step.line > 0 ? "line \(step.line), " : "")\(step.kindName))"
    }
}
