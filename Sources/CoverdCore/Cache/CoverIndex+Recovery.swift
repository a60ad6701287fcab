#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension IndexError {
    /// SQLITE_CORRUPT or SQLITE_NOTADB: the file itself is damaged. Never a
    /// full disk, a lock, a permission or an I/O error (tested).
    public var isCorrupt: Bool { code & 0xFF == 11 || code & 0xFF == 26 }
}

extension CoverIndex {
    /// Opens the daemon's index. One that SQLite calls corrupt or not a
    /// database on opening is moved aside (`moveAside`) and a new one made:
    /// the index only mirrors the records and the covers on disk, so starting
    /// afresh loses nothing a sync cannot rebuild (every cover is fetched
    /// again), while refusing to start would fail the same way at every
    /// restart. Any other failure (a full disk, permissions) is thrown as is.
    ///
    /// Damage deeper in the file shows only when the rows are read; the
    /// daemon then moves the index aside the same way and exits, so that the
    /// next start (systemd's restart) begins with a new one.
    public static func openReplacingCorrupt(
        cacheDirectory: String
    ) throws(IndexError) -> (index: CoverIndex, movedAside: (path: String, reason: IndexError)?) {
        do {
            return (try CoverIndex(cacheDirectory: cacheDirectory), nil)
        } catch where error.isCorrupt {
            guard let aside = moveAside(cacheDirectory: cacheDirectory) else { throw error }
            return (try CoverIndex(cacheDirectory: cacheDirectory), (aside, error))
        }
    }

    /// Renames the index, with its log, to `index.sqlite3.corrupt-<UTC time>`
    /// and removes its shared-memory file; returns the new name, or nil when
    /// it could not be moved (or its log neither moved nor removed: SQLite
    /// would replay that log into the next index).
    ///
    /// Only the daemon calls this, holding the cache's lock, so no other
    /// daemon writes the file. A `coverd verify` marking covers at that very
    /// moment writes into the file moved aside; its marks are lost, which
    /// costs nothing here, since the new index fetches every cover anyway.
    public static func moveAside(cacheDirectory: String) -> String? {
        let path = join(cacheDirectory, fileName)
        let aside = path + ".corrupt-" + utcStamp()
        guard rename(path, aside) == 0 else { return nil }
        if rename(path + "-wal", aside + "-wal") != 0 && errno != ENOENT && unlink(path + "-wal") != 0 && errno != ENOENT {
            return nil
        }
        unlink(path + "-shm")  // derived from the log; SQLite makes it again
        return aside
    }

    /// `20261124T031500Z`: sortable, and safe in a file name.
    private static func utcStamp() -> String {
        var seconds = time(nil)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }
}
