import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// A moment as the host writes it: ISO 8601 in UTC, to the second
/// (`2026-11-26T17:44:34Z`), the form `ISO8601DateFormatter` wrote. Made
/// with `strftime` and read field by field: Foundation's formatters load
/// the ICU time zone data on first use (a fifth of a fresh host's
/// activation, measured), and the host no longer loads Foundation.
package enum UTCTimestamp {
    /// Years 1 to 9999 are written in four digits; a moment outside them
    /// is written as the nearest end.
    package static func string(from date: Date) -> String {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        // 0001-01-01 and 9999-12-31T23:59:59, the range the reader takes.
        let first = -62_135_596_800.0, last = 253_402_300_799.0
        return string(secondsSinceEpoch: Int(seconds.isNaN ? 0 : min(max(seconds, first), last)))
    }

    package static func string(secondsSinceEpoch seconds: Int) -> String {
        var seconds = time_t(seconds)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// `text` as a moment: `YYYY-MM-DDTHH:MM:SS` then `Z` or an offset
    /// (`+01:00`), as `ISO8601DateFormatter` read it; nil for anything else.
    package static func date(from text: String) -> Date? {
        let bytes = Array(text.utf8)
        guard bytes.count == 20 || bytes.count == 25 else { return nil }
        /// The decimal number in `range`, digits only.
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        let separators: [(Int, Character)] = [(4, "-"), (7, "-"), (10, "T"), (13, ":"), (16, ":")]
        guard separators.allSatisfy({ bytes[$0.0] == $0.1.asciiValue }),
              let year = number(0..<4), let month = number(5..<7), let day = number(8..<10),
              let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
              (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 60
        else { return nil }
        var offset = 0
        if bytes.count == 20 {
            guard bytes[19] == UInt8(ascii: "Z") else { return nil }
        } else {
            guard bytes[19] == UInt8(ascii: "+") || bytes[19] == UInt8(ascii: "-"), bytes[22] == UInt8(ascii: ":"),
                  let hours = number(20..<22), let minutes = number(23..<25), hours < 24, minutes < 60
            else { return nil }
            offset = (hours * 3600 + minutes * 60) * (bytes[19] == UInt8(ascii: "+") ? 1 : -1)
        }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = Int(timegm(&parts))
        // timegm carries a day or second past its end into the next
        // (February 31 becomes March 3): such a moment is refused.
        guard Array(string(secondsSinceEpoch: seconds).utf8.prefix(19)) == Array(bytes[0..<19]) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds - offset))
    }
}
