import CSystemd
import Foundation
import Logging
import CoverdLogging

/// A swift-log backend writing to journald through `sd_journal_sendv`, with
/// structured fields: `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER=coverd`,
/// `CODE_FILE`/`CODE_LINE`/`CODE_FUNC` (the C macros that add them do not
/// reach Swift), and every metadata key as `COVERD_<KEY>` (`event` becomes
/// `COVERD_EVENT`, `album_id` `COVERD_ALBUM_ID`, …).
///
/// A value type like every swift-log handler. If journald cannot be reached,
/// that one line goes to standard error instead of being lost.
public struct JournalLogHandler: LevelSharingLogHandler {
    public let level: LogLevelSetting
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    public var ownLevel: Logger.Level?
    public var identifier = "coverd"

    public init(level: LogLevelSetting) {
        self.level = level
    }

    public func log(event: LogEvent) {
        let fields = mergedMetadata(event)
        var entries: [(String, String)] = [
            ("MESSAGE", event.message.description),
            ("PRIORITY", String(JournalLogHandler.priority(event.level))),
            ("SYSLOG_IDENTIFIER", identifier),
            ("CODE_FILE", event.file),
            ("CODE_LINE", String(event.line)),
            ("CODE_FUNC", event.function),
        ]
        for (key, value) in fields.sorted(by: { $0.key < $1.key }) {
            if let name = JournalLogHandler.fieldName(for: key) { entries.append((name, value.description)) }
        }
        if JournalLogHandler.send(entries) < 0 {
            StderrLogHandler(level: level).log(event: event)
        }
    }

    /// Where libsystemd sends entries. When it is missing, `sd_journal_sendv`
    /// drops them and reports success, so the fallback above never runs.
    public static let socketPath = "/run/systemd/journal/socket"

    /// Whether journald is there to receive entries.
    public static var isAvailable: Bool { access(socketPath, F_OK) == 0 }

    /// syslog priorities: trace and debug 7, info 6, notice 5, warning 4, error 3, critical 2.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }

    /// `COVERD_` + the key upper-cased, with anything outside `[A-Z0-9_]` as `_`,
    /// at most 64 characters (journald drops other names).
    public static func fieldName(for key: String) -> String? {
        let mapped = key.uppercased().unicodeScalars.map { scalar -> Character in
            let value = scalar.value
            let allowed = (0x41...0x5A).contains(value) || (0x30...0x39).contains(value) || value == 0x5F
            return allowed ? Character(scalar) : "_"
        }
        guard !mapped.isEmpty else { return nil }
        return String(("COVERD_" + String(mapped)).prefix(64))
    }

    /// One `sd_journal_sendv` call over a single buffer holding every
    /// `NAME=value`; the iovecs point into it only inside this function.
    static func send(_ entries: [(String, String)]) -> Int32 {
        var buffer: [UInt8] = []
        var ranges: [Range<Int>] = []
        for (name, value) in entries {
            let start = buffer.count
            buffer.append(contentsOf: name.utf8)
            buffer.append(UInt8(ascii: "="))
            buffer.append(contentsOf: value.utf8)
            ranges.append(start..<buffer.count)
        }
        return buffer.withUnsafeMutableBytes { raw in
            var vectors = ranges.map { range in
                iovec(iov_base: raw.baseAddress! + range.lowerBound, iov_len: range.count)
            }
            return sd_journal_sendv(&vectors, Int32(vectors.count))
        }
    }
}

/// Whether standard error is connected to the journal: systemd sets
/// `JOURNAL_STREAM=<device>:<inode>` for the stream it connected, and the
/// daemon checks that fd 2 is still that stream.
public func standardErrorIsJournal(environment: [String: String]) -> Bool {
    guard let value = environment["JOURNAL_STREAM"] else { return false }
    let parts = value.split(separator: ":")
    guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
    var info = stat()
    guard fstat(2, &info) == 0 else { return false }
    return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
}
