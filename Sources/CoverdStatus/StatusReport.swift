import Foundation
import CoverdBase
import CoverdCache
import CoverdModel

/// What `coverd status` shows, read from the index in the cache directory
/// (`StatusText` turns it into the table and the JSON).
/// Works whether or not the daemon runs (the index is in WAL mode).
public struct StatusReport: Sendable {
    /// The albums in the records (not those removed).
    public var rows: [IndexRow]
    /// Albums that left the records, their covers kept in `removed/` for a while (contract §9).
    public var removed: [IndexRow] = []
    public var coversDirectory: String
    /// Where the index should be, when `load` found none there (the daemon never ran with this cache).
    public var missingIndex: String?
    /// `freshness.max_age`, to tell which cached covers are outdated; zero: none is by age.
    public var maxAge: Duration = .seconds(2_592_000)
    /// The time the report speaks of.
    public var now = Date()

    public var summary: SyncSummary {
        var summary = SyncSummary(albums: rows.count)
        for row in rows {
            switch row.state {
            case .cached:
                summary.cached += 1
                if isOutdated(row) { summary.outdated += 1 }
            case .pending:
                summary.pending += 1
                if row.coverURL == nil { summary.awaitingLookup += 1 }
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
        let all = try index.rows()
        var report = StatusReport(rows: all.filter { $0.removedAt == nil }, coversDirectory: covers)
        report.removed = all.filter { $0.removedAt != nil }
        return report
    }

    /// Whether a cached cover is outdated (contract §8): `maxAge` past when it
    /// was last confirmed, or due for revalidation as the daemon last wrote it
    /// (asked by `coverd refresh`, or a revalidation not yet done or failed).
    public func isOutdated(_ row: IndexRow) -> Bool {
        guard row.state == .cached else { return false }
        if row.refresh != nil { return true }
        guard maxAge > .zero else { return false }
        return (row.checkedAt ?? row.updatedAt).addingTimeInterval(maxAge.seconds) <= now
    }

    /// Where a removed album's cover is kept.
    func keptPath(of row: IndexRow) -> String {
        CoverStore(cacheDirectory: splitPath(coversDirectory).directory).keptPath(for: row.id)
    }

    /// The cover's absolute path, for a cached album.
    func path(of row: IndexRow) -> String? {
        row.state == .cached ? join(coversDirectory, row.id.rawValue + ".png") : nil
    }
}
