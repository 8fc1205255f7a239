import BridgeCore
import YAMLKit

/// Lists and scalars: each checked, with a located error.
extension ConfigDecoder {
    func list(_ value: Located) throws(ConfigError) -> [Located] {
        guard case .sequence(let sequence) = value.node else {
            throw error(.wrongType, "expected a list for '\(value.path)', found \(Self.kind(of: value.node))", at: value.mark)
        }
        return sequence.items.enumerated().map { Located(node: $1, path: "\(value.path)[\($0)]") }
    }

    /// The scalar's text with `${VAR}` expanded (unless ``expandsVariables`` is false).
    func string(_ value: Located) throws(ConfigError) -> String {
        guard case .scalar(let scalar) = value.node else {
            throw error(.wrongType, "expected a string for '\(value.path)', found \(Self.kind(of: value.node))", at: value.mark)
        }
        guard expandsVariables else { return scalar.text }
        do {
            return try EnvironmentExpansion.expand(scalar.text, environment: environment)
        } catch {
            // Point at the "$" itself when the scalar is written plainly on one line.
            var mark = value.mark
            if let base = mark, scalar.style == .plain,
                !scalar.text.unicodeScalars.prefix(error.offset).contains("\n")
            {
                mark = Position(line: base.line, column: base.column + error.offset)
            }
            throw self.error(error.isUndefinedVariable ? .undefinedVariable : .invalidValue, error.message, at: mark)
        }
    }

    func nonEmptyString(_ value: Located) throws(ConfigError) -> String {
        let text = try string(value)
        guard !text.isEmpty else { throw error(.invalidValue, "'\(value.path)' must not be empty", at: value.mark) }
        return text
    }

    func bool(_ value: Located) throws(ConfigError) -> Bool {
        let text = try string(value)
        switch text.lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        default:
            throw error(.wrongType, "expected a boolean (true or false) for '\(value.path)', found '\(text)'", at: value.mark)
        }
    }

    func integer(_ value: Located, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        let text = try string(value)
        guard let number = Int(text) else {
            throw error(.wrongType, "expected an integer for '\(value.path)', found '\(text)'", at: value.mark)
        }
        guard range.contains(number) else {
            throw error(
                .invalidValue, "'\(value.path)' must be between \(range.lowerBound) and \(range.upperBound), not \(number)",
                at: value.mark)
        }
        return number
    }

    func number(_ value: Located) throws(ConfigError) -> Double {
        let text = try string(value)
        guard let number = Double(text), number.isFinite else {
            throw error(.wrongType, "expected a number for '\(value.path)', found '\(text)'", at: value.mark)
        }
        return number
    }

    func duration(_ value: Located, minimum: Duration = .nanoseconds(1), maximum: Duration? = nil) throws(ConfigError) -> Duration {
        let text = try string(value)
        let duration: Duration
        do {
            duration = try DurationSyntax.parse(text)
        } catch {
            throw self.error(.invalidDuration, "\(error.message) for '\(value.path)'", at: value.mark)
        }
        if duration < minimum {
            let message = minimum == .nanoseconds(1)
                ? "'\(value.path)' must be greater than zero"
                : "'\(value.path)' must be at least \(DurationSyntax.format(minimum))"
            throw error(.invalidDuration, message, at: value.mark)
        }
        if let maximum, duration > maximum {
            throw error(.invalidDuration, "'\(value.path)' must be at most \(DurationSyntax.format(maximum))", at: value.mark)
        }
        return duration
    }

    /// `bluetooth.scan_watchdog`: a duration of at least 1 s, or `off` (or `0s`) for none.
    func scanWatchdog(_ value: Located) throws(ConfigError) -> Duration? {
        let text = try string(value)
        if text.lowercased() == "off" { return nil }
        let period: Duration
        do {
            period = try DurationSyntax.parse(text)
        } catch {
            throw self.error(
                .invalidDuration,
                "\(error.message) for '\(value.path)' (or off: no watchdog)",
                at: value.mark)
        }
        if period == .zero { return nil }
        guard period >= .seconds(1) else {
            throw error(
                .invalidDuration, "'\(value.path)' must be at least 1s (or off: no watchdog), not \(text)",
                at: value.mark)
        }
        return period
    }

    func uuid(_ value: Located) throws(ConfigError) -> BluetoothUUID {
        let text = try string(value)
        guard let uuid = BluetoothUUID(text) else {
            throw error(
                .invalidUUID,
                "invalid Bluetooth UUID '\(text)' for '\(value.path)' (expected 16-bit like 180d, 32-bit, or 128-bit like 0000180d-0000-1000-8000-00805f9b34fb)",
                at: value.mark)
        }
        return uuid
    }

    /// A topic level: non-empty, no `/`, `+`, `#` or NUL.
    func segmentName(_ value: Located) throws(ConfigError) -> String {
        let text = try string(value)
        if let problem = TopicMapper.segmentProblem(text) {
            throw error(.invalidName, "invalid name '\(text)' for '\(value.path)': \(problem)", at: value.mark)
        }
        return text
    }

    /// A topic of one or more levels (base topic, discovery prefix).
    func topic(_ value: Located) throws(ConfigError) -> String {
        let text = try string(value)
        if let problem = TopicMapper.topicProblem(text) {
            throw error(.invalidValue, "invalid topic '\(text)' for '\(value.path)': \(problem)", at: value.mark)
        }
        return text
    }
}
