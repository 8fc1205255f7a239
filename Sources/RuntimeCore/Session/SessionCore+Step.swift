import BridgeCore
import Logging

extension SessionCore {
    /// One input's handling: the time it came, the device's objects then, and the actions decided so far. Made
    /// by ``SessionCore/handle(_:device:now:wall:)`` and passed to every decision of the step (nothing of it is kept).
    package struct Step {
        /// The time of the input.
        package let now: Instant
        /// The device's objects when the input came (nil: BlueZ has no object for it).
        package let view: DeviceView?
        /// The wall time of the input (a profile's write templates render with it).
        package let wall: WallTime
        /// What to do, in order.
        package private(set) var actions: [Action] = []

        /// A step at `now` with the device's objects `view`.
        package init(now: Instant, view: DeviceView?, wall: WallTime = WallTime(unix: 0)) {
            self.now = now
            self.view = view
            self.wall = wall
        }

        /// Decides `action`.
        package mutating func emit(_ action: Action) { actions.append(action) }

        /// A line for the session's log.
        package mutating func log(_ level: Logger.Level, _ message: String) { actions.append(.log(level, message)) }
    }
}
