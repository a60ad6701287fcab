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
    /// may be a file beside the index that could not be made: the
    /// shared-memory file, or the log (SQLite reports a directory it may not
    /// write to as `SQLITE_READONLY_DIRECTORY`, with no errno).
    static func isFileBesideFailure(extendedCode: Int32, systemErrno: Int32?) -> Bool {
        // SQLITE_IOERR_SHMOPEN, _SHMSIZE, _SHMMAP: sqlite3.h builds them with expressions, which Swift does not import.
        let sharedMemory: Set<Int32> = [SQLITE_IOERR | 18 << 8, SQLITE_IOERR | 19 << 8, SQLITE_IOERR | 21 << 8]
        let primary = extendedCode & 0xFF
        let noRoomOrRight = [ENOSPC, EDQUOT, EROFS, EACCES, EPERM].contains(systemErrno ?? 0)
        return sharedMemory.contains(extendedCode) || primary == SQLITE_READONLY || primary == SQLITE_CANTOPEN || noRoomOrRight
    }

    /// Pure: what to do after such a failure, given whether another process
    /// has the index open (nil: cannot tell) and the size of the log beside
    /// it (nil: none).
    static func readFallback(openElsewhere: Bool?, logBytes: Int?) -> ReadFallback {
        guard openElsewhere == false else { return .none }
        if let logBytes, logBytes > 0 { return .unmergedLog(bytes: logBytes) }
        return .immutable
    }

    /// Precondition: this process does not have the index open otherwise
    /// (only the command-line tools call this): `F_GETLK` does not see a
    /// process's own locks, and the descriptor it opens and closes would drop them.
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
        guard isFileBesideFailure(extendedCode: extendedCode, systemErrno: failure.systemErrno) else { throw failure }
        let log = path + "-wal"
        var info = stat()
        let logBytes: Int? = stat(log, &info) == 0 ? Int(info.st_size) : nil
        switch readFallback(openElsewhere: isOpenElsewhereForAWhile(path), logBytes: logBytes) {
        case .none:
            throw failure
        case .unmergedLog(let bytes):
            var explained = failure
            explained.message += "; \(log) (\(bytes) bytes) may hold changes not yet in the index, and reading them needs \(path)-shm, which could not be made"
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

    /// `isOpenElsewhere`, asked up to three times 50 ms apart while it says
    /// true: another `status` that failed its first read as this one did
    /// holds the lock only until it closes that connection. A daemon holds it
    /// throughout, and then this costs 0.1 s before the first error stands.
    private static func isOpenElsewhereForAWhile(_ path: String) -> Bool? {
        var answer = isOpenElsewhere(path)
        for _ in 0..<2 where answer == true {
            usleep(50_000)
            answer = isOpenElsewhere(path)
        }
        return answer
    }

    /// Whether another process holds SQLite's shared lock on `path`: true, false, or nil when it cannot be told.
    static func isOpenElsewhere(_ path: String) -> Bool? {
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
