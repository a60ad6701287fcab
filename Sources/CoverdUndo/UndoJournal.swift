#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// The undo journal: one file per `coverd remove` in `<cache>/undo/`
/// (`<sequence>.undo`, written whole with a rename and flushed before the
/// record file changes), the newest undone first. The last `kept` removals
/// are remembered; older entries are dropped as new ones come.
///
/// Threading: one process at a time changes it, under an `flock` on
/// `<cache>/undo/.lock` (`locked`), so two `remove`s never take one number.
public struct UndoJournal: Sendable {
    public let directory: String
    /// How many removals `undo` can go back through (the contract asks for at least 20).
    public static let kept = 50

    public init(cacheDirectory: String) {
        directory = join(cacheDirectory, "undo")
    }

    /// Runs `body` holding the journal's lock, waiting for another process that holds it.
    public func locked<T>(_ body: () throws(UndoError) -> T) throws(UndoError) -> T {
        do {
            try makeDirectories(directory, mode: 0o700)
        } catch {
            throw .journal(.system(error))
        }
        let path = join(directory, ".lock")
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .journal(.system(SystemError("open", path: path))) }
        defer { close(fd) }  // Closing the descriptor releases the lock.
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw .journal(.system(SystemError("flock", path: path))) }
        }
        return try body()
    }

    /// Adds `entry` as the newest, durably; returns it with its sequence number.
    func append(_ entry: UndoEntry) throws(UndoJournalError) -> UndoEntry {
        var entry = entry
        entry.sequence = (try sequences().last ?? 0) + 1
        do {
            try writeFileDurably(entry.encoded(), to: path(of: entry.sequence), mode: 0o600)
        } catch {
            throw .system(error)
        }
        try prune()
        return entry
    }

    /// The newest entry, or nil when the journal is empty.
    func newest() throws(UndoJournalError) -> UndoEntry? {
        guard let sequence = try sequences().last else { return nil }
        let path = path(of: sequence)
        let bytes: [UInt8]
        do {
            // A record is at most a few MiB (`limits.max_record_bytes`); twice that, and a header.
            bytes = try readRegularFile(path, limit: 1 << 30)
        } catch {
            throw .unreadable(path: path, error)
        }
        do throws(UndoJournalError.Damage) {
            return try UndoEntry.decode(bytes, sequence: sequence)
        } catch {
            throw .damaged(path: path, error)
        }
    }

    /// Forgets `entry` (it was undone, or had nothing to undo).
    func discard(_ entry: UndoEntry) throws(UndoJournalError) {
        do {
            try removeFileDurably(path(of: entry.sequence))
        } catch {
            throw .system(error)
        }
    }

    func path(of sequence: UInt64) -> String {
        let digits = String(sequence)
        return join(directory, String(repeating: "0", count: max(0, 16 - digits.count)) + digits + ".undo")
    }

    /// The entries' numbers, oldest first.
    private func sequences() throws(UndoJournalError) -> [UInt64] {
        guard let entries = listDirectory(directory) else {
            throw .system(SystemError("list", path: directory))
        }
        return entries.compactMap { entry -> UInt64? in
            guard let name = entry.name, name.hasSuffix(".undo"), name.count == 21 else { return nil }
            return UInt64(name.prefix(16))
        }.sorted()
    }

    private func prune() throws(UndoJournalError) {
        for sequence in try sequences().dropLast(Self.kept) {
            let path = path(of: sequence)
            guard unlink(path) == 0 || errno == ENOENT else { throw .system(SystemError("unlink", path: path)) }
        }
    }
}
