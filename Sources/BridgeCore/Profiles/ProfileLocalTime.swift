/// A wall time as a local calendar date and time of day (proleptic Gregorian), for the `{now.*}`
/// template sources (an eQ-3 thermostat's clock: `03 {now.year2|u8}{now.month|u8}...`). Computed
/// by hand from Unix seconds and the UTC offset in force (the module has no Foundation): Howard
/// Hinnant's `civil_from_days`.
public struct ProfileLocalTime: Sendable, Hashable {
    /// A part of the date or time a template can name (`{now.hour|u8}`).
    public enum Field: String, Sendable, Hashable, CaseIterable {
        /// The year modulo 100 (2017 → 17).
        case year2
        /// 1…12.
        case month
        /// 1…31.
        case day
        /// 0…23.
        case hour
        /// 0…59.
        case minute
        /// 0…59.
        case second

        /// The names, for messages: `year2, month, ...`.
        static let names = allCases.map(\.rawValue).joined(separator: ", ")
    }

    /// The year (2017).
    public var year: Int64
    /// 1…12.
    public var month: Int64
    /// 1…31.
    public var day: Int64
    /// 0…23.
    public var hour: Int64
    /// 0…59.
    public var minute: Int64
    /// 0…59.
    public var second: Int64

    /// The local time of `unixTime` (seconds since 1970-01-01 UTC) at `utcOffset` seconds east of
    /// UTC; `nil` when their sum does not fit 64 bits.
    public init?(unixTime: Int64, utcOffset: Int32) {
        let (local, overflow) = unixTime.addingReportingOverflow(Int64(utcOffset))
        guard !overflow, local > Int64.min / 2, local < Int64.max / 2 else { return nil }
        var days = local / 86_400
        var seconds = local % 86_400
        if seconds < 0 {
            seconds += 86_400
            days -= 1
        }
        hour = seconds / 3600
        minute = seconds % 3600 / 60
        second = seconds % 60
        // civil_from_days: days since 1970-01-01 → year, month, day.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    }

    /// The value of `field`.
    public subscript(field: Field) -> Int64 {
        switch field {
        case .year2:
            let remainder = year % 100
            return remainder < 0 ? remainder + 100 : remainder
        case .month: return month
        case .day: return day
        case .hour: return hour
        case .minute: return minute
        case .second: return second
        }
    }
}
