import Foundation
import Logging

/// Readable log lines on standard error:
/// `2026-11-22T09:14:03.512Z info cached cover for album x … event=cover_cached album_id=x`.
///
/// A value type, as swift-log asks: changing the level or metadata of one
/// logger never affects another. Each line is one `write(2)`, so lines from
/// different threads never interleave.
public struct StderrLogHandler: LogHandler {
    public let level: LogLevelSetting
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?

    public init(level: LogLevelSetting) {
        self.level = level
    }

    /// Follows the daemon's shared setting, so a reload changes it everywhere.
    public var logLevel: Logger.Level {
        get { level.current }
        set { level.current = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var fields = metadata
        if let provided = metadataProvider?.get() { fields.merge(provided) { $1 } }
        if let extra = event.metadata { fields.merge(extra) { $1 } }
        var line = StderrLogHandler.timestamp() + " " + event.level.rawValue + " " + event.message.description
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(StderrLogHandler.quoted(value.description))"
        }
        line += "\n"
        var bytes = Array(line.utf8)
        bytes.withUnsafeMutableBytes { buffer in
            var offset = 0
            while offset < buffer.count {
                let written = Foundation.write(2, buffer.baseAddress! + offset, buffer.count - offset)
                if written <= 0 {
                    if written < 0 && errno == EINTR { continue }
                    return  // stderr is gone; there is nowhere left to report it.
                }
                offset += written
            }
        }
    }

    /// A value with spaces or quotes is quoted so the line stays parseable.
    static func quoted(_ value: String) -> String {
        guard value.isEmpty || value.contains(where: { $0 == " " || $0 == "\"" || $0 == "=" || $0.isNewline }) else {
            return value
        }
        return "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            .replacingOccurrences(of: "\n", with: "\\n") + "\""
    }

    /// UTC, millisecond precision, ISO 8601.
    static func timestamp() -> String {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var seconds = now.tv_sec
        var parts = tm()
        gmtime_r(&seconds, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), Int(now.tv_nsec / 1_000_000))
    }
}
