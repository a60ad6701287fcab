import Foundation
import CoverdBase

/// Parses an HTTP `Retry-After` value (RFC 9110 §10.2.3): a number of seconds,
/// or an HTTP-date in any of the three formats HTTP/1.1 recipients must accept.
public enum RetryAfter {
    /// The delay the value asks for, measured from `now`; a date in the past is zero.
    /// `nil` when the value is neither form.
    public static func delay(from value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        if !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            // Saturate absurd values instead of overflowing; callers clamp anyway.
            return .seconds(Int64(text.prefix(12)) ?? Int64.max / 2)
        }
        guard let date = httpDate(text) else { return nil }
        let seconds = date.timeIntervalSince(now)
        return seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded())) : .zero
    }

    /// IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), obsolete RFC 850
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
    public static func httpDate(_ text: String) -> Date? {
        let parts = text.split(whereSeparator: { $0 == " " || $0 == "," }).map(String.init)
        switch parts.count {
        case 6 where parts[5] == "GMT":
            return date(year: Int(parts[3]), month: monthNumber(parts[2]), day: Int(parts[1]), time: parts[4])
        case 4 where parts[3] == "GMT":
            let pieces = parts[1].split(separator: "-").map(String.init)
            guard pieces.count == 3, let shortYear = Int(pieces[2]), pieces[2].count == 2 else { return nil }
            // RFC 9110: a two-digit year more than 50 years ahead is in the past century.
            let year = shortYear < 70 ? 2000 + shortYear : 1900 + shortYear
            return date(year: year, month: monthNumber(pieces[1]), day: Int(pieces[0]), time: parts[2])
        case 5:
            return date(year: Int(parts[4]), month: monthNumber(parts[1]), day: Int(parts[2]), time: parts[3])
        default:
            return nil
        }
    }

    private static func date(year: Int?, month: Int?, day: Int?, time: String) -> Date? {
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard let year, let month, let day, (1...31).contains(day), (1900...9999).contains(year), clock.count == 3,
            (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2])
        else { return nil }
        let seconds = daysFromCivil(year: year, month: month, day: day) * 86_400 + clock[0] * 3600 + clock[1] * 60 + clock[2]
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func monthNumber(_ name: String) -> Int? {
        let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        return months.firstIndex(of: name.lowercased()).map { $0 + 1 }
    }
}
