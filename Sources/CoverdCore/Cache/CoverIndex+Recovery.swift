#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

extension IndexError {
    /// SQLITE_CORRUPT or SQLITE_NOTADB: the file itself is damaged, not the disk or a lock.
    public var isCorrupt: Bool { code & 0xFF == 11 || code & 0xFF == 26 }
}

extension CoverIndex {
    /// Opens the daemon's index. One that SQLite calls corrupt or not a
    /// database is moved aside (with its log) as `index.sqlite3.corrupt-<UTC
    /// time>` and a new one made: the index only mirrors the records and the
    /// covers on disk, so starting afresh loses nothing the next sync cannot
    /// rebuild, while refusing to start would fail the same way at every
    /// restart. Any other failure (a full disk, permissions) is thrown as is.
    /// Only for the daemon, which holds the cache's lock: no other writer can
    /// be using the file.
    public static func openReplacingCorrupt(
        cacheDirectory: String
    ) throws(IndexError) -> (index: CoverIndex, movedAside: (path: String, reason: IndexError)?) {
        do {
            return (try CoverIndex(cacheDirectory: cacheDirectory), nil)
        } catch where error.isCorrupt {
            let path = join(cacheDirectory, fileName)
            let aside = path + ".corrupt-" + utcStamp()
            // Could not move it: the original error says more than the rename's.
            guard rename(path, aside) == 0 else { throw error }
            if rename(path + "-wal", aside + "-wal") != 0 && errno != ENOENT { unlink(path + "-wal") }
            unlink(path + "-shm")  // derived from the log; SQLite makes it again
            return (try CoverIndex(cacheDirectory: cacheDirectory), (aside, error))
        }
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
