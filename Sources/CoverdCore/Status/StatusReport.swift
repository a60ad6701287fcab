import Foundation

/// What `coverd status` shows, read from the index in the cache directory.
/// Works whether or not the daemon runs (the index is in WAL mode).
public struct StatusReport: Sendable {
    public var rows: [IndexRow]
    public var coversDirectory: String

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
        guard FileManager.default.fileExists(atPath: join(cacheDirectory, CoverIndex.fileName)) else {
            return StatusReport(rows: [], coversDirectory: covers)
        }
        let index = try CoverIndex(cacheDirectory: cacheDirectory, readOnly: true)
        return StatusReport(rows: try index.rows(), coversDirectory: covers)
    }

    func path(of row: IndexRow) -> String? {
        row.state == .cached ? join(coversDirectory, row.id.rawValue + ".png") : nil
    }

    /// The contract's `--json` form, albums ordered by id.
    public func json() -> String {
        let summary = self.summary
        var out = "{\"summary\": {\"albums\": \(summary.albums), \"cached\": \(summary.cached), "
            + "\"pending\": \(summary.pending), \"failed\": \(summary.failed)},\n \"albums\": ["
        out.reserveCapacity(rows.count * 300)
        for (offset, row) in rows.enumerated() {
            out += offset == 0 ? "\n  " : ",\n  "
            out += "{\"id\": \(JSONText.quote(row.id.rawValue)), \"title\": \(JSONText.quote(row.title)), "
            out += "\"artist\": \(JSONText.quote(row.artist)), \"cover_url\": \(JSONText.quote(row.coverURL)), "
            out += "\"state\": \(JSONText.quote(row.state.rawValue)), \"path\": \(JSONText.quote(path(of: row))), "
            out += "\"error\": \(JSONText.quote(row.error)), \"record\": \(JSONText.quote(row.record))}"
        }
        out += rows.isEmpty ? "]}\n" : "\n ]}\n"
        return out
    }

    /// A summary line and one line per album, for people.
    public func table() -> String {
        var out = summary.line + "\n"
        guard !rows.isEmpty else { return out }
        let idWidth = min(max(rows.map(\.id.rawValue.count).max() ?? 2, 2), 48)
        out += "STATE    " + "ID".padding(toLength: idWidth, withPad: " ", startingAt: 0) + "  ALBUM / DETAIL\n"
        for row in rows {
            let state = row.state.rawValue.padding(toLength: 7, withPad: " ", startingAt: 0)
            let id = row.id.rawValue.padding(toLength: idWidth, withPad: " ", startingAt: 0)
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
enum JSONText {
    static func quote(_ text: String?) -> String {
        guard let text else { return "null" }
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x2028 || scalar.value == 0x2029:
                out += String(format: "\\u%04x", scalar.value)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}
