import CoverdModel
import Foundation

/// The index's table, its versions, and how a row is written to and read
/// from it. Version 2 added what lookups need (contract §7): `cover_url`
/// may be null, the ids a record gives, and how its cover was found.
/// Version 3 added `removed_at`: a row with one is an album that left the
/// records, its cover kept aside in `removed/` for a while (contract §9).
enum IndexSchema {
    static let version = 4

    static let create = """
        CREATE TABLE IF NOT EXISTS albums (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL,
            artist TEXT NOT NULL,
            year TEXT,
            genre TEXT,
            cover_url TEXT,
            mbid TEXT,
            release_group_mbid TEXT,
            record TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'cached', 'failed')),
            error TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_retry REAL,
            bytes INTEGER,
            file_mtime INTEGER,
            http_status INTEGER,
            source TEXT,
            found_mbid TEXT,
            found_release_group_mbid TEXT,
            resolved_url TEXT,
            updated_at REAL NOT NULL,
            removed_at REAL,
            etag TEXT,
            last_modified TEXT,
            checked_at REAL,
            refresh TEXT
        ) WITHOUT ROWID;
        """

    /// Every column, in the order `values(of:)` writes and `row(_:)` reads them.
    static let columns = """
        id, title, artist, year, genre, cover_url, mbid, release_group_mbid, record, state, error, attempts, \
        next_retry, bytes, file_mtime, http_status, source, found_mbid, found_release_group_mbid, resolved_url, updated_at, \
        removed_at, etag, last_modified, checked_at, refresh
        """

    /// The columns added since version 3, in `columns` order, with their types.
    static let addedColumns = [("removed_at", "REAL"), ("etag", "TEXT"), ("last_modified", "TEXT"), ("checked_at", "REAL"), ("refresh", "TEXT")]

    /// What an older table gives for the columns of version 4: no validators,
    /// and a cached cover as confirmed when it was last written.
    static let version4Defaults = "NULL, NULL, CASE WHEN state = 'cached' THEN updated_at END, NULL"

    /// A `?` for each of `columns`, for an insert.
    static let placeholders = Array(repeating: "?", count: columns.split(separator: ",").count).joined(separator: ", ")

    /// The same columns from a version 1 table: no ids, every cover from its
    /// record's URL, and a cached one downloaded from it.
    static let columnsOfVersion1 = """
        id, title, artist, year, genre, cover_url, NULL, NULL, record, state, error, attempts, \
        next_retry, bytes, file_mtime, http_status, 'url', NULL, NULL, CASE WHEN state = 'cached' THEN cover_url END, updated_at, \
        NULL, \(version4Defaults)
        """

    /// The same columns from a version 2 table: no album of it was removed.
    static let columnsOfVersion2 = """
        id, title, artist, year, genre, cover_url, mbid, release_group_mbid, record, state, error, attempts, \
        next_retry, bytes, file_mtime, http_status, source, found_mbid, found_release_group_mbid, resolved_url, updated_at, \
        NULL, \(version4Defaults)
        """

    /// The same columns from a version 3 table: no validators yet.
    static let columnsOfVersion3 = """
        id, title, artist, year, genre, cover_url, mbid, release_group_mbid, record, state, error, attempts, \
        next_retry, bytes, file_mtime, http_status, source, found_mbid, found_release_group_mbid, resolved_url, updated_at, \
        removed_at, \(version4Defaults)
        """

    /// What a reader selects from an index of `version`: `status` may read an
    /// index that a daemon of this version has not opened yet.
    static func columns(forVersion version: Int) -> String {
        switch version {
        case 1: columnsOfVersion1
        case 2: columnsOfVersion2
        case 3: columnsOfVersion3
        default: columns
        }
    }

    /// The index's schema version (0: a new database).
    static func version(of db: SQLiteConnection) throws(IndexError) -> Int {
        var version = 0
        try db.prepare("PRAGMA user_version").query { row in version = Int(row.integer(0) ?? 0) }
        return version
    }

    /// The albums table's column names.
    private static func columnNames(_ db: SQLiteConnection) throws(IndexError) -> Set<String> {
        var names: Set<String> = []
        try db.prepare("PRAGMA table_info(albums)").query { row in
            if let name = row.text(1) { names.insert(name) }
        }
        return names
    }

    /// Makes the table, or brings an older one up to date in one transaction
    /// (a crash part-way leaves the old version whole); an index made by a
    /// newer coverd is refused rather than changed. A table an older coverd
    /// opened and labelled with its own version again keeps the columns it
    /// has: copying it as version 1 would forget what lookups found.
    static func migrate(_ db: SQLiteConnection) throws(IndexError) {
        let current = try version(of: db)
        guard current != version else { return }
        guard current <= version else {
            throw IndexError(
                operation: "open", path: db.path, code: 1,
                message: "the index has schema version \(current), made by a newer coverd (this one knows \(version))",
                systemErrno: nil)
        }
        try db.execute("BEGIN IMMEDIATE")
        do throws(IndexError) {
            let existing = current == 0 ? [] : try columnNames(db)
            if current == 0 {
                try db.execute(create)
            } else if !existing.contains("found_mbid") {
                try db.execute("ALTER TABLE albums RENAME TO albums_version1")
                try db.execute(create)
                try db.execute("INSERT INTO albums (\(columns)) SELECT \(columnsOfVersion1) FROM albums_version1")
                try db.execute("DROP TABLE albums_version1")
            } else {
                for (name, type) in addedColumns where !existing.contains(name) {
                    try db.execute("ALTER TABLE albums ADD COLUMN \(name) \(type)")
                }
            }
            if current > 0 && current < 4 {
                // A cover cached before validators were kept counts as confirmed when it was written.
                try db.execute("UPDATE albums SET checked_at = updated_at WHERE state = 'cached' AND checked_at IS NULL")
            }
            try db.execute("PRAGMA user_version = \(version)")
            try db.execute("COMMIT")
        } catch {
            do throws(IndexError) {
                try db.execute("ROLLBACK")
            } catch let rollback {
                var both = error
                both.message += "; rollback also failed: \(rollback.message)"
                throw both
            }
            throw error
        }
    }

    /// A row's values, in `columns` order.
    static func values(of row: IndexRow) -> [SQLiteValue] {
        func text(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
        func integer(_ value: Int?) -> SQLiteValue { value.map { .integer(Int64($0)) } ?? .null }
        return [
            .text(row.id.rawValue), .text(row.title), .text(row.artist), text(row.year), text(row.genre),
            text(row.coverURL), text(row.releaseID), text(row.releaseGroupID), .text(row.record),
            .text(row.state.rawValue), text(row.error), .integer(Int64(row.attempts)),
            row.nextRetry.map { .real($0.timeIntervalSince1970) } ?? .null, integer(row.bytes),
            row.fileMTime.map { .integer($0) } ?? .null, integer(row.httpStatus), text(row.source?.rawValue),
            text(row.foundReleaseID), text(row.foundReleaseGroupID), text(row.resolvedURL),
            .real(row.updatedAt.timeIntervalSince1970), row.removedAt.map { .real($0.timeIntervalSince1970) } ?? .null,
            text(row.etag), text(row.lastModified), row.checkedAt.map { .real($0.timeIntervalSince1970) } ?? .null,
            text(row.refresh?.rawValue),
        ]
    }

    /// The row a result holds, in `columns` order; nil for one that is not
    /// coverd's own (an invalid id could name a path).
    static func row(_ result: SQLiteRow) -> IndexRow? {
        guard let id = result.text(0), AlbumID.isValid(id), let stateText = result.text(9),
            let state = CoverState(rawValue: stateText)
        else { return nil }
        var row = IndexRow(
            id: AlbumID(trusted: id), title: result.text(1) ?? "", artist: result.text(2) ?? "", record: result.text(8) ?? "",
            state: state, updatedAt: Date(timeIntervalSince1970: result.real(20) ?? 0))
        row.year = result.text(3)
        row.genre = result.text(4)
        row.coverURL = result.text(5)
        row.releaseID = result.text(6)
        row.releaseGroupID = result.text(7)
        row.error = result.text(10)
        row.attempts = Int(result.integer(11) ?? 0)
        row.nextRetry = result.real(12).map { Date(timeIntervalSince1970: $0) }
        row.bytes = result.integer(13).map { Int($0) }
        row.fileMTime = result.integer(14)
        row.httpStatus = result.integer(15).map { Int($0) }
        row.source = result.text(16).flatMap(CoverSource.init(rawValue:))
        row.foundReleaseID = result.text(17)
        row.foundReleaseGroupID = result.text(18)
        row.resolvedURL = result.text(19)
        row.removedAt = result.real(21).map { Date(timeIntervalSince1970: $0) }
        row.etag = result.text(22)
        row.lastModified = result.text(23)
        row.checkedAt = result.real(24).map { Date(timeIntervalSince1970: $0) }
        row.refresh = result.text(25).flatMap(RefreshMark.init(rawValue:))
        return row
    }
}
