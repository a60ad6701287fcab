import Foundation
import Synchronization
import CoverdBase
import CoverdModel

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
            try IndexSchema.migrate(db)
        }
        selectColumns = IndexSchema.columns(forVersion: try IndexSchema.version(of: db))
        connection = Mutex(Connection(db))
    }

    /// The columns this connection reads: an index not yet brought up to date is read as it is.
    private let selectColumns: String

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
                "SELECT \(selectColumns) FROM albums WHERE id > ? ORDER BY id LIMIT \(size)")
            var rows: [IndexRow] = []
            var read = 0
            var last: String?
            try statement.query([after.map { .text($0) } ?? .text("")]) { row in
                read += 1
                last = row.text(0)
                if let indexRow = IndexSchema.row(row) { rows.append(indexRow) }
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
                        "INSERT OR REPLACE INTO albums (\(IndexSchema.columns)) VALUES (\(IndexSchema.placeholders))")
                    connection.delete = try db.prepare("DELETE FROM albums WHERE id = ?")
                }
                guard let upsert = connection.upsert, let delete = connection.delete else { return }
                for change in changes {
                    switch change {
                    case .upsert(let row): try upsert.run(IndexSchema.values(of: row))
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
}
