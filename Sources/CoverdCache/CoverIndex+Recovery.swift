#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

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
    /// restart. An opening that fails for lack of space is tried once more
    /// if `makingRoom` (given that error) frees some; any other failure
    /// (permissions, say) is thrown as is.
    ///
    /// Damage deeper in the file shows only when the rows are read; the
    /// daemon then moves the index aside the same way and exits, so that the
    /// next start (systemd's restart) begins with a new one.
    public static func openReplacingCorrupt(
        cacheDirectory: String, makingRoom: (IndexError) -> Bool = { _ in false }
    ) throws(IndexError) -> (index: CoverIndex, movedAside: (path: String, reason: IndexError)?) {
        // Opening writes (the log and shared-memory files), so a full disk can fail it.
        func openIndex() throws(IndexError) -> CoverIndex {
            do {
                return try CoverIndex(cacheDirectory: cacheDirectory)
            } catch where error.isOutOfSpace && makingRoom(error) {
                return try CoverIndex(cacheDirectory: cacheDirectory)
            }
        }
        do {
            return (try openIndex(), nil)
        } catch where error.isCorrupt {
            let damage = error
            guard let aside = moveAside(cacheDirectory: cacheDirectory) else { throw damage }
            do {
                return (try openIndex(), (aside, damage))
            } catch {
                // The move must not go unsaid: the next start makes a new index and fetches every cover again.
                var failure = error
                failure.operation += " (after moving the damaged index, \(damage.message), to \(aside))"
                throw failure
            }
        }
    }

    /// Renames the index, with its log, to `index.sqlite3.corrupt-<UTC time>`
    /// and removes its shared-memory file; returns the new name, or nil when
    /// the index itself could not be renamed. A log that can be neither moved
    /// nor removed is left: SQLite discards a log it finds beside an empty
    /// database when it makes the new one.
    ///
    /// Only the daemon calls this, holding the cache's lock where the
    /// filesystem has locks, so no second daemon writes the file. Not
    /// guarded: a `coverd verify` with the index open at that moment. It
    /// keeps the old file through its descriptor, but when it closes, SQLite
    /// removes the log and shared-memory files by name; if a new daemon has
    /// made its own by then (systemd restarts it 2 s later), those are the
    /// ones removed. A verify spanning a damaged index's restart is rare;
    /// the cost would be the new index's last writes.
    public static func moveAside(cacheDirectory: String) -> String? {
        let path = join(cacheDirectory, fileName)
        let aside = path + ".corrupt-" + utcStamp()
        guard rename(path, aside) == 0 else { return nil }
        if rename(path + "-wal", aside + "-wal") != 0 && errno != ENOENT { unlink(path + "-wal") }
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
