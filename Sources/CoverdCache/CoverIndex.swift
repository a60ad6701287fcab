import Foundation
import Synchronization
import CoverdBase
import CoverdModel

/// One album's row in the index: everything `status` shows and everything a
/// restart needs to avoid downloading again.
public struct IndexRow: Sendable, Equatable {
    public var id: AlbumID
    public var title: String
    public var artist: String
    public var year: String?
    public var genre: String?
    public var coverURL: String
    public var record: String
    public var state: CoverState
    public var error: String?
    public var attempts: Int
    public var nextRetry: Date?
    /// Size and modification time of the cached file, to notice it changed behind our back.
    public var bytes: Int?
    public var fileMTime: Int64?
    public var httpStatus: Int?
    public var updatedAt: Date

    public init(album: Album, state: CoverState, updatedAt: Date) {
        id = album.id
        title = album.title
        artist = album.artist
        year = album.year
        genre = album.genre
        coverURL = album.coverURL.string
        record = album.record
        self.state = state
        attempts = 0
        self.updatedAt = updatedAt
    }
}

extension IndexRow {
    /// The album as the index remembers it; nil if the stored URL is no longer valid.
    public var album: Album? {
        guard let url = try? CoverURL(validating: coverURL) else { return nil }
        return Album(id: id, title: title, artist: artist, year: year, genre: genre, coverURL: url, record: record, position: .fromIndex)
    }
}

/// A change to the index; many are applied in one transaction.
public enum IndexChange: Sendable {
    /// Boxed: batches of thousands of changes are queued, and a row is large.
    indirect case upsert(IndexRow)
    case delete(AlbumID)
}

/// The SQLite index in the cache directory (`index.sqlite3`).
///
/// Thread-safe: the connection is only used under the mutex. WAL mode lets
/// `coverd status` read while the daemon writes.
public final class CoverIndex: Sendable {
    public static let fileName = "index.sqlite3"
    public let path: String
    private let connection: Mutex<Connection>

    /// The connection and its statements, prepared once: thousands of batches reuse them.
    private final class Connection {
        let db: SQLiteConnection
        var upsert: SQLiteStatement?
        var delete: SQLiteStatement?

        init(_ db: SQLiteConnection) {
            self.db = db
        }
    }

    public init(cacheDirectory: String, readOnly: Bool = false) throws(IndexError) {
        path = join(cacheDirectory, CoverIndex.fileName)
        let db = readOnly ? try CoverIndex.openForReading(path) : try SQLiteConnection(path: path, readOnly: false)
        if !readOnly {
            try db.execute("PRAGMA journal_mode=WAL")
            // NORMAL in WAL mode survives a process crash (kill -9); only a power
            // loss can drop the last commits, which a restart re-derives.
            try db.execute("PRAGMA synchronous=NORMAL")
            // A small, bounded WAL: checkpoint every 256 pages and truncate it back to
            // 1 MiB, so a nearly full disk still has room for the index's next writes.
            try db.execute("PRAGMA wal_autocheckpoint=256")
            try db.execute("PRAGMA journal_size_limit=1048576")
            try db.execute(CoverIndex.schema)
        }
        connection = Mutex(Connection(db))
    }

    static let schema = """
        CREATE TABLE IF NOT EXISTS albums (
            id TEXT PRIMARY KEY NOT NULL,
            title TEXT NOT NULL,
            artist TEXT NOT NULL,
            year TEXT,
            genre TEXT,
            cover_url TEXT NOT NULL,
            record TEXT NOT NULL,
            state TEXT NOT NULL CHECK (state IN ('pending', 'cached', 'failed')),
            error TEXT,
            attempts INTEGER NOT NULL DEFAULT 0,
            next_retry REAL,
            bytes INTEGER,
            file_mtime INTEGER,
            http_status INTEGER,
            updated_at REAL NOT NULL
        ) WITHOUT ROWID;
        PRAGMA user_version = 1;
        """

    private static let columns =
        "id, title, artist, year, genre, cover_url, record, state, error, attempts, next_retry, bytes, file_mtime, http_status, updated_at"

    /// Every row, ordered by id. An index the daemon is still creating has none.
    public func rows() throws(IndexError) -> [IndexRow] {
        var rows: [IndexRow] = []
        try forEachRow(expecting: { rows.reserveCapacity($0) }) { rows.append($0) }
        return rows
    }

    /// Hands every row to `body`, ordered by id, a page at a time, without
    /// holding them all (at start-up the daemon keeps them packed).
    /// `expecting` hears the count first.
    public func forEachRow(expecting: (Int) -> Void = { _ in }, _ body: (IndexRow) -> Void) throws(IndexError) {
        let count = try connection.withLock { connection throws(IndexError) -> Int? in
            var hasTable = false
            try connection.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'albums'").query { _ in hasTable = true }
            guard hasTable else { return nil }
            var count = 0
            try connection.db.prepare("SELECT count(*) FROM albums").query { row in count = Int(row.integer(0) ?? 0) }
            return count
        }
        guard let count else { return }
        expecting(count)
        // Thousands of rows name the same record file: they share one string.
        var recordPaths: Set<String> = []
        var after: String?
        while true {
            let (page, last) = try self.page(after: after)
            for var row in page {
                row.record = recordPaths.insert(row.record).memberAfterInsert
                body(row)
            }
            guard let last else { return }
            after = last
        }
    }

    /// Up to 1,000 rows with ids after `after`, and the last id read (nil at the end).
    private func page(after: String?) throws(IndexError) -> ([IndexRow], String?) {
        let size = 1000
        return try connection.withLock { connection throws(IndexError) -> ([IndexRow], String?) in
            let statement = try connection.db.prepare(
                "SELECT \(CoverIndex.columns) FROM albums WHERE id > ? ORDER BY id LIMIT \(size)")
            var rows: [IndexRow] = []
            var read = 0
            var last: String?
            try statement.query([after.map { .text($0) } ?? .text("")]) { row in
                read += 1
                last = row.text(0)
                // A row that is not coverd's own (an invalid id could name a path) is skipped.
                guard let id = row.text(0), AlbumID.isValid(id), let url = row.text(5), let stateText = row.text(7),
                    let state = CoverState(rawValue: stateText)
                else { return }
                rows.append(
                    IndexRow(
                        id: AlbumID(trusted: id), title: row.text(1) ?? "", artist: row.text(2) ?? "",
                        year: row.text(3), genre: row.text(4), coverURL: url, record: row.text(6) ?? "",
                        state: state, error: row.text(8), attempts: Int(row.integer(9) ?? 0),
                        nextRetry: row.real(10).map { Date(timeIntervalSince1970: $0) },
                        bytes: row.integer(11).map { Int($0) }, fileMTime: row.integer(12),
                        httpStatus: row.integer(13).map { Int($0) },
                        updatedAt: Date(timeIntervalSince1970: row.real(14) ?? 0)))
            }
            return (rows, read == size ? last : nil)
        }
    }

    /// The ids of albums whose cover is not cached (as `coverd verify` marks them), without reading whole rows.
    public func uncachedIDs() throws(IndexError) -> Set<AlbumID> {
        try connection.withLock { connection throws(IndexError) -> Set<AlbumID> in
            var ids: Set<AlbumID> = []
            try connection.db.prepare("SELECT id FROM albums WHERE state != 'cached'").query { row in
                if let id = row.text(0), AlbumID.isValid(id) { ids.insert(AlbumID(trusted: id)) }
            }
            return ids
        }
    }

    /// Applies `changes` in order, in one transaction.
    public func apply(_ changes: [IndexChange]) throws(IndexError) {
        guard !changes.isEmpty else { return }
        try connection.withLock { connection throws(IndexError) in
            let db = connection.db
            try db.execute("BEGIN IMMEDIATE")
            do throws(IndexError) {
                if connection.upsert == nil {
                    connection.upsert = try db.prepare(
                        "INSERT OR REPLACE INTO albums (\(CoverIndex.columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                    connection.delete = try db.prepare("DELETE FROM albums WHERE id = ?")
                }
                guard let upsert = connection.upsert, let delete = connection.delete else { return }
                for change in changes {
                    switch change {
                    case .upsert(let row): try upsert.run(CoverIndex.values(of: row))
                    case .delete(let id): try delete.run([.text(id.rawValue)])
                    }
                }
                try db.execute("COMMIT")
            } catch {
                do throws(IndexError) {
                    try db.execute("ROLLBACK")
                } catch let rollback {
                    throw IndexError(
                        operation: error.operation, path: error.path, code: error.code,
                        message: "\(error.message); rollback also failed: \(rollback.message)", systemErrno: error.systemErrno)
                }
                throw error
            }
        }
    }

    private static func values(of row: IndexRow) -> [SQLiteValue] {
        func text(_ value: String?) -> SQLiteValue { value.map { .text($0) } ?? .null }
        func integer(_ value: Int?) -> SQLiteValue { value.map { .integer(Int64($0)) } ?? .null }
        return [
            .text(row.id.rawValue), .text(row.title), .text(row.artist), text(row.year), text(row.genre),
            .text(row.coverURL), .text(row.record), .text(row.state.rawValue), text(row.error),
            .integer(Int64(row.attempts)), row.nextRetry.map { .real($0.timeIntervalSince1970) } ?? .null,
            integer(row.bytes), row.fileMTime.map { .integer($0) } ?? .null, integer(row.httpStatus),
            .real(row.updatedAt.timeIntervalSince1970),
        ]
    }
}

extension IndexRow {
    package init(
        id: AlbumID, title: String, artist: String, year: String?, genre: String?, coverURL: String, record: String,
        state: CoverState, error: String?, attempts: Int, nextRetry: Date?, bytes: Int?, fileMTime: Int64?,
        httpStatus: Int?, updatedAt: Date
    ) {
        self.id = id
        self.title = title
        self.artist = artist
        self.year = year
        self.genre = genre
        self.coverURL = coverURL
        self.record = record
        self.state = state
        self.error = error
        self.attempts = attempts
        self.nextRetry = nextRetry
        self.bytes = bytes
        self.fileMTime = fileMTime
        self.httpStatus = httpStatus
        self.updatedAt = updatedAt
    }

    /// The cover file's size and modification time when the row was written, if it has them.
    package var stamp: FileStamp? {
        guard let bytes, let fileMTime else { return nil }
        return FileStamp(bytes: bytes, mtime: fileMTime)
    }
}
