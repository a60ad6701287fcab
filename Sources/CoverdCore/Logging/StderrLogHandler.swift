import Foundation
import Logging

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

    public init(level: LogLevelSetting) {
        self.level = level
    }

    public func log(event: LogEvent) {
        let fields = mergedMetadata(event)
        var line = StderrLogHandler.timestamp()
        line.reserveCapacity(256)
        line += " "
        line += event.level.rawValue
        line += " "
        line += event.message.description
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            line += " "
            line += key
            line += "="
            line += StderrLogHandler.quoted(value.description)
        }
        line += "\n"
        // A failure means stderr is gone: there is nowhere left to report it.
        _ = Array(line.utf8).withUnsafeBytes { writeAll($0, to: 2) }
    }

    /// A value with spaces or quotes is quoted so the line stays parseable.
    static func quoted(_ value: String) -> String {
        let needsQuotes = value.isEmpty || value.utf8.contains { $0 == 0x20 || $0 == 0x22 || $0 == 0x3D || $0 == 0x0A || $0 == 0x0D }
        guard needsQuotes else { return value }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r") + "\""
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
