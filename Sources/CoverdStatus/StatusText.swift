#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase
import CoverdCache
import Foundation

/// A status report as text: a table for people, and the contract's
/// `status --json` form for scripts.
public struct StatusText: Sendable {
    public let report: StatusReport

    public init(_ report: StatusReport) {
        self.report = report
    }

    /// The contract's `--json` form, albums ordered by id.
    public func json() -> String {
        String(decoding: jsonBytes(), as: UTF8.self)
    }

    /// `json()` as UTF-8, built as bytes: string appends and interpolations
    /// were much of a large `status --json`.
    public func jsonBytes() -> [UInt8] {
        let summary = report.summary
        let rows = report.rows
        var out: [UInt8] = []
        out.reserveCapacity(rows.count * 300 + 128)
        out += "{\"summary\": {\"albums\": \(summary.albums), \"cached\": \(summary.cached), ".utf8
        out += "\"pending\": \(summary.pending), \"failed\": \(summary.failed), \"outdated\": \(summary.outdated)},\n \"albums\": [".utf8
        for (offset, row) in rows.enumerated() {
            out += (offset == 0 ? "\n  " : ",\n  ").utf8
            StatusText.appendAlbum(row, to: &out)
            out += ", \"state\": ".utf8
            JSONText.append(row.state.rawValue, to: &out)
            out += ", \"path\": ".utf8
            JSONText.append(report.path(of: row), to: &out)
            out += ", \"error\": ".utf8
            JSONText.append(row.error, to: &out)
            out += ", \"record\": ".utf8
            JSONText.append(row.record, to: &out)
            out += ", \"source\": ".utf8
            JSONText.append(row.source?.rawValue, to: &out)
            out += ", \"mbid\": ".utf8
            JSONText.append(row.releaseID ?? row.foundReleaseID, to: &out)
            out += ", \"release_group_mbid\": ".utf8
            JSONText.append(row.releaseGroupID ?? row.foundReleaseGroupID, to: &out)
            out += ", \"resolved_url\": ".utf8
            JSONText.append(row.state == .cached ? row.resolvedURL : nil, to: &out)
            out += (report.isOutdated(row) ? ", \"outdated\": true" : ", \"outdated\": false").utf8
            out += ", \"checked_at\": ".utf8
            JSONText.append(row.state == .cached ? StatusText.utc(row.checkedAt ?? row.updatedAt) : nil, to: &out)
            out += "}".utf8
        }
        out += (rows.isEmpty ? "]}\n" : "\n ]}\n").utf8
        return out
    }

    /// A summary line and one line per album, for people.
    public func table() -> String {
        let summary = report.summary
        let rows = report.rows
        var out = summary.line + (summary.awaitingLookup > 0 ? "; \(summary.awaitingLookup) waiting for a lookup" : "")
            + (summary.outdated > 0 ? "; \(summary.outdated) outdated" : "") + "\n"
        guard !rows.isEmpty else { return out }
        // Columns line up to 48 characters; a longer id is shown whole (it names the cover's file), pushing its line out.
        let idWidth = min(max(rows.map(\.id.rawValue.count).max() ?? 2, 2), 48)
        out += "STATE    " + "ID".padding(toLength: idWidth, withPad: " ", startingAt: 0) + "  ALBUM / DETAIL\n"
        for row in rows {
            // An outdated cover is still cached; the table says so with a mark, `state` keeps its three values.
            let state = (row.state.rawValue + (report.isOutdated(row) ? "*" : "")).padding(toLength: 7, withPad: " ", startingAt: 0)
            let id = row.id.rawValue.padding(toLength: max(idWidth, row.id.rawValue.count), withPad: " ", startingAt: 0)
            var detail = "\(row.artist) – \(row.title)"
            if let source = row.source { detail += " [\(source.rawValue)]" }
            if let error = row.error, row.state != .cached {
                detail += ": \(error)"
                if let retry = row.nextRetry, retry > Date() {
                    detail += " (next try \(StatusText.describe(retry)))"
                }
            }
            out += "\(state)  \(id)  \(detail)\n"
        }
        return out
    }

    /// `status --removed`: the albums that left the records and until when
    /// their covers are kept (`keepFor` after they left).
    public func removedTable(keepFor: Duration) -> String {
        let rows = report.removed
        var out = "\(rows.count) removed album(s) with a kept cover\n"
        guard !rows.isEmpty else { return out }
        let idWidth = min(max(rows.map(\.id.rawValue.count).max() ?? 2, 2), 48)
        out += "KEPT UNTIL            " + "ID".padding(toLength: idWidth, withPad: " ", startingAt: 0) + "  ALBUM\n"
        for row in rows {
            let until = StatusText.describe((row.removedAt ?? Date()).addingTimeInterval(keepFor.seconds))
            let id = row.id.rawValue.padding(toLength: max(idWidth, row.id.rawValue.count), withPad: " ", startingAt: 0)
            out += "\(until)  \(id)  \(row.artist) – \(row.title)\n"
        }
        return out
    }

    /// `status --removed --json`: `{"removed": [{"id", "title", "artist", "cover_url", "record", "path", "removed_at", "kept_until"}]}`.
    public func removedJSON(keepFor: Duration) -> [UInt8] {
        var out: [UInt8] = Array("{\"removed\": [".utf8)
        for (offset, row) in report.removed.enumerated() {
            let removedAt = row.removedAt ?? Date()
            out += (offset == 0 ? "\n  " : ",\n  ").utf8
            StatusText.appendAlbum(row, to: &out)
            out += ", \"record\": ".utf8
            JSONText.append(row.record, to: &out)
            out += ", \"path\": ".utf8
            JSONText.append(report.keptPath(of: row), to: &out)
            out += ", \"removed_at\": ".utf8
            JSONText.append(StatusText.describe(removedAt), to: &out)
            out += ", \"kept_until\": ".utf8
            JSONText.append(StatusText.describe(removedAt.addingTimeInterval(keepFor.seconds)), to: &out)
            out += "}".utf8
        }
        out += (report.removed.isEmpty ? "]}\n" : "\n ]}\n").utf8
        return out
    }

    /// An album object's opening members, the same in both JSON forms: `{"id", "title", "artist", "cover_url"`.
    static func appendAlbum(_ row: IndexRow, to out: inout [UInt8]) {
        out += "{\"id\": ".utf8
        JSONText.append(row.id.rawValue, to: &out)
        out += ", \"title\": ".utf8
        JSONText.append(row.title, to: &out)
        out += ", \"artist\": ".utf8
        JSONText.append(row.artist, to: &out)
        out += ", \"cover_url\": ".utf8
        JSONText.append(row.coverURL, to: &out)
    }

    /// `2026-11-27T14:05:06Z`, made with `gmtime_r`: a formatter per row was most of a large `status --json`.
    static func utc(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return describe(date) }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    static func describe(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
