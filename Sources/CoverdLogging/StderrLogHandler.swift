import Foundation
import Logging
import CoverdBase

/// Readable log lines on standard error:
/// `2026-11-22T09:14:03.512Z info cached cover for album x … event=cover_cached album_id=x`.
///
/// A value type, as swift-log asks: changing the level or metadata of one
/// logger never affects another. Each line is one `write(2)`, so lines from
/// different threads never interleave.
public struct StderrLogHandler: LevelSharingLogHandler {
    public let level: LogLevelSetting
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var ownLevel: Logger.Level?
    /// A progress line on the same terminal, which each log line is written above.
    public let statusLine: TerminalStatusLine?

    public init(level: LogLevelSetting, statusLine: TerminalStatusLine? = nil) {
        self.level = level
        self.statusLine = statusLine
    }

    public func log(event: LogEvent) {
        let fields = mergedMetadata(event)
        var line = StderrLogHandler.timestamp()
        line.reserveCapacity(256)
        line += " "
        line += event.level.rawValue
        line += " "
        line += StderrLogHandler.oneLine(event.message.description)
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            line += " "
            line += key
            line += "="
            line += StderrLogHandler.quoted(value.description)
        }
        line += "\n"
        if let statusLine { return statusLine.writeAbove(Array(line.utf8), to: 2) }
        // A failure means stderr is gone: there is nowhere left to report it.
        _ = Array(line.utf8).withUnsafeBytes { writeAll($0, to: 2) }
    }

    /// A value with spaces, quotes or control characters is quoted so the line stays parseable.
    static func quoted(_ value: String) -> String {
        // 0xC2 and 0xE2 lead C1 controls and U+2028/2029 (and some harmless characters, quoted all the same).
        let needsQuotes = value.isEmpty
            || value.utf8.contains { $0 == 0x20 || $0 == 0x22 || $0 == 0x3D || $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }
        guard needsQuotes else { return value }
        return "\"" + oneLine(value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")) + "\""
    }

    /// Control characters escaped (`\n`, `\r`, `\t`, `\x1b`, C1 as `\x9b`,
    /// the Unicode line separators as `\u2028`): a record's file
    /// name or a server's text in a message can neither start a line that
    /// looks like an event of its own nor drive the reader's terminal.
    static func oneLine(_ text: String) -> String {
        // C1 controls (U+0080–U+009F) and U+2028/2029 are non-ASCII, so their UTF-8 starts with 0xC2 or 0xE2.
        guard text.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xE2 }) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0..<0x20, 0x7F, 0x80..<0xA0:
                let hex = String(scalar.value, radix: 16)
                out += "\\x" + (hex.count < 2 ? "0" + hex : hex)
            case 0x2028, 0x2029:
                out += "\\u" + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// UTC, millisecond precision, ISO 8601 (built by hand: String(format:) is slow).
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func digits(_ value: Int, _ width: Int) {
            var divisor = 1
            for _ in 1..<width { divisor *= 10 }
            var rest = value
            while divisor > 0 {
                bytes.append(UInt8(48 + rest / divisor % 10))
                rest %= divisor
                divisor /= 10
            }
        }
        digits(Int(parts.tm_year) + 1900, 4); bytes.append(0x2D)
        digits(Int(parts.tm_mon) + 1, 2); bytes.append(0x2D)
        digits(Int(parts.tm_mday), 2); bytes.append(0x54)
        digits(Int(parts.tm_hour), 2); bytes.append(0x3A)
        digits(Int(parts.tm_min), 2); bytes.append(0x3A)
        digits(Int(parts.tm_sec), 2); bytes.append(0x2E)
        digits(Int(now.tv_nsec / 1_000_000), 3); bytes.append(0x5A)
        return String(decoding: bytes, as: UTF8.self)
    }
}
