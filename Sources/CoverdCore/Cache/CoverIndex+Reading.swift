import CLinux
import CSQLite
#if canImport(Glibc)
import Glibc
#endif

/// Opening the index to read it (`coverd status`, `coverd verify`), also
/// where the WAL's shared-memory file cannot be made.
///
/// A reader of a WAL database needs the `-shm` file beside it, and creates
/// it when no writer has it open; on a full disk, or in a directory it may
/// not write to, that fails ("disk I/O error"), and `status` could not read
/// an index that is all there. When nothing else has the index open and no
/// write-ahead log with content lies beside it (the daemon stopped cleanly),
/// everything is in the file and nothing is changing it, so it is opened
/// immutable instead, which needs nothing beside it. Otherwise the first
/// error stands, with what to do about an unmerged log.
///
/// The window left: a daemon that starts between the check and the read may
/// change the file under the immutable reader, which then fails or reads a
/// row set from before that start; `status` runs again cleanly.
extension CoverIndex {
    /// What `openForReading` does after a first read failed.
    enum ReadFallback: Equatable {
        case immutable
        /// The first error stands: it is not about the shared-memory file, or the file is in use.
        case none
        /// A log of `bytes` not yet merged into the index, which reading needs the shared-memory file for.
        case unmergedLog(bytes: Int)
    }

    /// SQLite's shared-lock bytes (its `SHARED_FIRST` and `SHARED_SIZE`):
    /// every connection to a WAL database holds a read lock there while open.
    static let sharedLockRange: (start: Int64, length: Int64) = (0x4000_0002, 510)

    /// Pure: whether a failed first read (its extended result code and errno)
    /// is the shared-memory file that could not be made, and what to do then,
    /// given whether another process has the file open (nil: unknown) and the
    /// size of the log beside it (nil: none).
    static func readFallback(extendedCode: Int32, systemErrno: Int32?, openElsewhere: Bool?, logBytes: Int?) -> ReadFallback {
        // SQLITE_IOERR_SHMOPEN, _SHMSIZE, _SHMMAP, SQLITE_READONLY_CANTLOCK, _CANTINIT: sqlite3.h builds them
        // with expressions, which Swift does not import.
        let sharedMemory: Set<Int32> = [
            SQLITE_IOERR | 18 << 8, SQLITE_IOERR | 19 << 8, SQLITE_IOERR | 21 << 8, SQLITE_READONLY | 2 << 8, SQLITE_READONLY | 5 << 8,
        ]
        let noRoomOrRight = [ENOSPC, EDQUOT, EROFS, EACCES, EPERM].contains(systemErrno ?? 0)
        guard sharedMemory.contains(extendedCode) || extendedCode & 0xFF == SQLITE_CANTOPEN || noRoomOrRight else { return .none }
        guard openElsewhere == false else { return .none }
        if let logBytes, logBytes > 0 { return .unmergedLog(bytes: logBytes) }
        return .immutable
    }

    static func openForReading(_ path: String) throws(IndexError) -> SQLiteConnection {
        let failure: IndexError
        let extendedCode: Int32
        do {
            let db = try SQLiteConnection(path: path, readOnly: true)
            do {
                try probe(db)
                return db
            } catch {
                failure = error
                extendedCode = db.lastExtendedCode
            }
        }  // `db` is closed here, before `isOpenElsewhere` opens and closes the file: closing any descriptor drops a process's POSIX locks.
        let log = path + "-wal"
        var info = stat()
        let logBytes: Int? = stat(log, &info) == 0 ? Int(info.st_size) : nil
        let fallback = readFallback(extendedCode: extendedCode, systemErrno: failure.systemErrno, openElsewhere: isOpenElsewhere(path), logBytes: logBytes)
        switch fallback {
        case .none:
            throw failure
        case .unmergedLog(let bytes):
            var explained = failure
            explained.message += "; \(log) holds \(bytes) bytes not yet merged into the index, and reading them needs room for \(path)-shm: free some space"
            throw explained
        case .immutable:
            do {
                let immutable = try SQLiteConnection(path: path, readOnly: true, immutable: true)
                try probe(immutable)
                return immutable
            } catch {
                var both = failure
                both.message += "; read as immutable: \(error.message)"
                throw both
            }
        }
    }

    /// Whether another process holds SQLite's shared lock on `path`: true, false, or nil when it cannot be told.
    private static func isOpenElsewhere(_ path: String) -> Bool? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        switch coverd_range_locked_elsewhere(fd, sharedLockRange.start, sharedLockRange.length) {
        case 0: return false
        case 1: return true
        default: return nil
        }
    }

    /// Reads the schema: the first read, which is where a missing shared-memory file shows.
    private static func probe(_ db: SQLiteConnection) throws(IndexError) {
        try db.prepare("SELECT count(*) FROM sqlite_master").query { _ in }
    }
}
