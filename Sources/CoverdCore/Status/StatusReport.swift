import Foundation

/// What `coverd status` shows, read from the index in the cache directory.
/// Works whether or not the daemon runs (the index is in WAL mode).
public struct StatusReport: Sendable {
    public var rows: [IndexRow]
    public var coversDirectory: String
    /// Where the index should be, when `load` found none there (the daemon never ran with this cache).
    public var missingIndex: String?

    public var summary: SyncSummary {
        var summary = SyncSummary(albums: rows.count)
        for row in rows {
            switch row.state {
            case .cached: summary.cached += 1
            case .pending: summary.pending += 1
            case .failed: summary.failed += 1
            }
        }
        return summary
    }

    /// Reads the index; an absent index (the daemon never ran here) is an empty report.
    public static func load(cacheDirectory: String) throws(IndexError) -> StatusReport {
        let covers = join(cacheDirectory, "covers")
        let indexFile = join(cacheDirectory, CoverIndex.fileName)
        guard FileManager.default.fileExists(atPath: indexFile) else {
            return StatusReport(rows: [], coversDirectory: covers, missingIndex: indexFile)
        }
        let index = try CoverIndex(cacheDirectory: cacheDirectory, readOnly: true)
        return StatusReport(rows: try index.rows(), coversDirectory: covers)
    }

    func path(of row: IndexRow) -> String? {
        row.state == .cached ? join(coversDirectory, row.id.rawValue + ".png") : nil
    }

    /// The contract's `--json` form, albums ordered by id.
    public func json() -> String {
        String(decoding: jsonBytes(), as: UTF8.self)
    }

    /// `json()` as UTF-8, built as bytes: at 100,000 albums (29 MB) string
    /// appends and interpolations were half of `status --json`.
    public func jsonBytes() -> [UInt8] {
        let summary = self.summary
        var out: [UInt8] = []
        out.reserveCapacity(rows.count * 300 + 128)
        out += "{\"summary\": {\"albums\": \(summary.albums), \"cached\": \(summary.cached), ".utf8
        out += "\"pending\": \(summary.pending), \"failed\": \(summary.failed)},\n \"albums\": [".utf8
        for (offset, row) in rows.enumerated() {
            out += (offset == 0 ? "\n  " : ",\n  ").utf8
            out += "{\"id\": ".utf8
            JSONText.append(row.id.rawValue, to: &out)
            out += ", \"title\": ".utf8
            JSONText.append(row.title, to: &out)
            out += ", \"artist\": ".utf8
            JSONText.append(row.artist, to: &out)
            out += ", \"cover_url\": ".utf8
            JSONText.append(row.coverURL, to: &out)
            out += ", \"state\": ".utf8
            JSONText.append(row.state.rawValue, to: &out)
            out += ", \"path\": ".utf8
            JSONText.append(path(of: row), to: &out)
            out += ", \"error\": ".utf8
            JSONText.append(row.error, to: &out)
            out += ", \"record\": ".utf8
            JSONText.append(row.record, to: &out)
            out += "}".utf8
        }
        out += (rows.isEmpty ? "]}\n" : "\n ]}\n").utf8
        return out
    }

    /// A summary line and one line per album, for people.
    public func table() -> String {
        var out = summary.line + "\n"
        guard !rows.isEmpty else { return out }
        // Columns line up to 48 characters; a longer id is shown whole (it names the cover's file), pushing its line out.
        let idWidth = min(max(rows.map(\.id.rawValue.count).max() ?? 2, 2), 48)
        out += "STATE    " + "ID".padding(toLength: idWidth, withPad: " ", startingAt: 0) + "  ALBUM / DETAIL\n"
        for row in rows {
            let state = row.state.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
            let id = row.id.rawValue.padding(toLength: max(idWidth, row.id.rawValue.count), withPad: " ", startingAt: 0)
            var detail = "\(row.artist) – \(row.title)"
            if let error = row.error, row.state != .cached {
                detail += ": \(error)"
                if let retry = row.nextRetry, retry > Date() {
                    detail += " (next try \(StatusReport.describe(retry)))"
                }
            }
            out += "\(state)  \(id)  \(detail)\n"
        }
        return out
    }

    static func describe(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}

/// JSON string literals, escaped per RFC 8259.
public enum JSONText {
    /// `text` as a JSON string literal. Works on UTF-8 bytes: most text needs
    /// no escaping at all and is copied whole (at 100,000 albums, quoting
    /// scalar by scalar was half of `status --json`).
    public static func quote(_ text: String?) -> String {
        var out: [UInt8] = []
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `text` as a JSON string literal (or `null`) to `out`.
    public static func append(_ text: String?, to out: inout [UInt8]) {
        guard var text else {
            out += "null".utf8
            return
        }
        text.withUTF8 { bytes in
            out.append(0x22)
            if !bytes.contains(where: needsEscape) && !containsLineSeparator(bytes) {
                out += bytes
                out.append(0x22)
                return
            }
            var index = 0
            while index < bytes.count {
                let byte = bytes[index]
                // U+2028 and U+2029 (E2 80 A8/A9) are valid JSON but break JavaScript readers.
                if byte == 0xE2, index + 2 < bytes.count, bytes[index + 1] == 0x80, bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 {
                    out += (bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8
                    index += 3
                    continue
                }
                switch byte {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case 0x0A: out += [0x5C, 0x6E]
                case 0x0D: out += [0x5C, 0x72]
                case 0x09: out += [0x5C, 0x74]
                case ..<0x20:
                    let hex = Array("0123456789abcdef".utf8)
                    out += [0x5C, 0x75, 0x30, 0x30, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
                default: out.append(byte)
                }
                index += 1
            }
            out.append(0x22)
        }
    }

    private static func needsEscape(_ byte: UInt8) -> Bool { byte < 0x20 || byte == 0x22 || byte == 0x5C }

    private static func containsLineSeparator(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 3 else { return false }
        for index in 0..<(bytes.count - 2) where bytes[index] == 0xE2 && bytes[index + 1] == 0x80 {
            if bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 { return true }
        }
        return false
    }
}
