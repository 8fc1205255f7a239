/// One step of a profile's connection steps or of a command (SPEC §15).
public struct ProfileStep: Sendable, Hashable {
    /// What the step does.
    public enum Action: Sendable, Hashable {
        /// Writes the rendered template; `response` nil lets the characteristic's properties decide.
        case write(characteristic: BluetoothUUID, value: ProfileTemplate, response: Bool?)
        /// Reads the value, decoded by the named decode when one is given.
        case read(characteristic: BluetoothUUID, decode: String?)
        /// Subscribes; with a decode, every notification is decoded to the values topic.
        case subscribe(characteristic: BluetoothUUID, decode: String?)
        /// Waits for the next notification (which must come within `timeout`), decoded when a decode is given.
        case waitNotify(characteristic: BluetoothUUID, timeout: Duration, decode: String?)
        /// Waits.
        case sleep(Duration)
    }

    /// Runs the step only when an option is set (`if:`) or not set (`unless:`).
    public enum Condition: Sendable, Hashable {
        /// `if: options.NAME`
        case ifSet(String)
        /// `unless: options.NAME`
        case unlessSet(String)

        /// The option it tests.
        public var option: String {
            switch self {
            case .ifSet(let name), .unlessSet(let name): name
            }
        }

        /// Whether the step runs with these options.
        public func holds(_ options: [String: String]) -> Bool {
            switch self {
            case .ifSet(let name): options[name] != nil
            case .unlessSet(let name): options[name] == nil
            }
        }
    }

    /// What the step does.
    public var action: Action
    /// When it runs.
    public var condition: Condition?
    /// The step's line in its profile file (for log and error messages; 0 when unknown).
    public var line: Int

    /// Creates a step.
    public init(_ action: Action, condition: Condition? = nil, line: Int = 0) {
        self.action = action
        self.condition = condition
        self.line = line
    }

    /// The characteristic the step touches, if any.
    public var characteristic: BluetoothUUID? {
        switch action {
        case .write(let uuid, _, _), .read(let uuid, _), .subscribe(let uuid, _), .waitNotify(let uuid, _, _): uuid
        case .sleep: nil
        }
    }

    /// The decode the step names, if any.
    public var decode: String? {
        switch action {
        case .read(_, let decode), .subscribe(_, let decode), .waitNotify(_, _, let decode): decode
        case .write, .sleep: nil
        }
    }

    /// The step's name in log lines: `write`, `read`, `subscribe`, `wait_notify`, `sleep`.
    public var kindName: String {
        switch action {
        case .write: "write"
        case .read: "read"
        case .subscribe: "subscribe"
        case .waitNotify: "wait_notify"
        case .sleep: "sleep"
        }
    }
}
