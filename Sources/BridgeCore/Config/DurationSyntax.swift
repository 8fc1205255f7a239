/// The duration syntax of `bridge.yaml`: a number followed by a unit, several
/// such parts may be combined (`500ms`, `10s`, `5m`, `1h`, `1m30s`, `1.5s`).
///
/// Units: `h`, `m`, `s`, `ms`, `us` (or `µs`), `ns`. A bare number is rejected
/// because its unit would be a guess.
public enum DurationSyntax {
    /// Why a duration could not be parsed.
    public struct Error: Swift.Error, Sendable, Hashable, CustomStringConvertible {
        /// A human-readable message, e.g. `"a duration needs a unit: write 10s (or 10ms, 10m, 10h)"`.
        public var message: String

        /// Creates an error.
        public init(message: String) {
            self.message = message
        }

        /// The message.
        public var description: String { message }
    }

    static let units: [(name: String, nanoseconds: UInt64)] = [
        ("h", 3_600_000_000_000), ("m", 60_000_000_000), ("s", 1_000_000_000),
        ("ms", 1_000_000), ("us", 1_000), ("µs", 1_000), ("ns", 1),
    ]

    /// Parses a duration such as `"10s"`, `"500ms"` or `"1m30s"`.
    public static func parse(_ text: String) throws(DurationSyntax.Error) -> Duration {
        let scalars = Array(text.unicodeScalars)
        guard !scalars.isEmpty else { throw Error(message: "empty duration (expected e.g. 500ms, 10s, 5m, 1h)") }
        var index = 0
        var total: UInt64 = 0
        func isDigit(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
        while index < scalars.count {
            // Number: digits, optionally a fraction.
            var whole: UInt64 = 0
            var digitCount = 0
            var overflow = false
            while index < scalars.count, isDigit(scalars[index]) {
                let (times10, o1) = whole.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(UInt64(scalars[index].value - 0x30))
                overflow = overflow || o1 || o2
                whole = sum
                digitCount += 1
                index += 1
            }
            var fraction = 0.0
            if index < scalars.count, scalars[index] == "." {
                index += 1
                var scale = 0.1
                var fractionDigits = 0
                while index < scalars.count, isDigit(scalars[index]) {
                    fraction += Double(scalars[index].value - 0x30) * scale
                    scale /= 10
                    fractionDigits += 1
                    index += 1
                }
                if fractionDigits == 0 {
                    throw Error(message: "invalid duration '\(text)' (expected e.g. 500ms, 1.5s, 10s, 5m, 1h)")
                }
            }
            if digitCount == 0 {
                throw Error(message: "invalid duration '\(text)' (expected e.g. 500ms, 10s, 5m, 1h)")
            }
            // Unit: letters up to the next digit.
            var unit = ""
            while index < scalars.count, !isDigit(scalars[index]), scalars[index] != "." {
                unit.unicodeScalars.append(scalars[index])
                index += 1
            }
            if unit.isEmpty {
                let number = String(String.UnicodeScalarView(scalars[..<index]))
                if index == scalars.count && total == 0 {
                    throw Error(
                        message: "a duration needs a unit: write \(number)s (or \(number)ms, \(number)m, \(number)h)")
                }
                throw Error(message: "missing unit after '\(number)' in duration '\(text)'")
            }
            guard let nanosecondsPerUnit = units.first(where: { $0.name == unit })?.nanoseconds else {
                throw Error(message: "unknown unit '\(unit)' in duration '\(text)' (use ms, s, m or h)")
            }
            let (product, o3) = whole.multipliedReportingOverflow(by: nanosecondsPerUnit)
            let fractional = UInt64((fraction * Double(nanosecondsPerUnit)).rounded())
            let (part, o4) = product.addingReportingOverflow(fractional)
            let (sum, o5) = total.addingReportingOverflow(part)
            if overflow || o3 || o4 || o5 || sum > UInt64(Int64.max) {
                throw Error(message: "duration '\(text)' is too large")
            }
            total = sum
        }
        return .nanoseconds(Int64(total))
    }

    /// Formats a duration in the same syntax, largest units first: `"1m30s"`, `"500ms"`, `"0s"`.
    /// The result parses back to the same duration (to the nanosecond).
    public static func format(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let negative = seconds < 0 || (seconds == 0 && attoseconds < 0)
        let magnitude = negative ? Duration.zero - duration : duration
        let components = magnitude.components
        var secondsLeft = UInt64(components.seconds)
        var nanoseconds = UInt64(components.attoseconds / 1_000_000_000)
        if secondsLeft == 0 && nanoseconds == 0 { return "0s" }
        var result = negative ? "-" : ""
        let hours = secondsLeft / 3600
        secondsLeft %= 3600
        let minutes = secondsLeft / 60
        secondsLeft %= 60
        if hours > 0 { result += "\(hours)h" }
        if minutes > 0 { result += "\(minutes)m" }
        if secondsLeft > 0 { result += "\(secondsLeft)s" }
        let milliseconds = nanoseconds / 1_000_000
        nanoseconds %= 1_000_000
        let microseconds = nanoseconds / 1_000
        nanoseconds %= 1_000
        if milliseconds > 0 { result += "\(milliseconds)ms" }
        if microseconds > 0 { result += "\(microseconds)us" }
        if nanoseconds > 0 { result += "\(nanoseconds)ns" }
        return result
    }
}
