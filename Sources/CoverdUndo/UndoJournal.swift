#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase

/// The undo journal: one file per `coverd remove` in `<cache>/undo/`
/// (`<sequence>.undo`, written whole with a rename and flushed before the
/// record file changes), the newest undone first. The last `kept` removals
/// are remembered (fewer, but never under `keptAtLeast`, when their record
/// files are large); older entries are dropped once a new removal is done.
/// An entry `undo --skip` sets aside is renamed `<sequence>.skipped` and
/// dropped with the entries older than it.
///
/// Threading: one process at a time changes it, under an `flock` on
/// `<cache>/undo/.lock` (`locked`), so two `remove`s never take one number.
public struct UndoJournal: Sendable {
    public let directory: String
    /// How many removals `undo` can go back through (the contract asks for at least 20).
    public static let kept = 50
    /// How many removals are kept whatever their size (the contract's 20).
    public static let keptAtLeast = 20
    /// Past this many bytes of entries, older ones go, down to `keptAtLeast`.
    public static let keptBytes: Int64 = 256 << 20

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
        // Entries half-written by a killed remove: under the lock, none is being written now.
        sweepDeadTemporaries(in: directory)
        return try body()
    }

    /// Adds `entry` as the newest, durably; returns it with its sequence number.
    func append(_ entry: UndoEntry) throws(UndoJournalError) -> UndoEntry {
        var entry = entry
        // A skipped entry keeps its number taken, so numbers never repeat.
        entry.sequence = (try names().map(\.sequence).max() ?? 0) + 1
        do {
            try writeFileDurably(entry.encoded(), to: path(of: entry.sequence), mode: 0o600)
        } catch {
            throw .system(error.error)
        }
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

    /// Forgets `entry` (it was undone, or had nothing to undo, or its removal never reached the file).
    func discard(_ entry: UndoEntry) throws(UndoJournalError) {
        do {
            try removeFileDurably(path(of: entry.sequence))
        } catch {
            throw .system(error.error)
        }
    }

    /// Sets the newest entry aside as `<sequence>.skipped`, whatever state it is in, so `undo` goes past it.
    func skipNewest() throws(UndoJournalError) -> String? {
        guard let sequence = try sequences().last else { return nil }
        let from = path(of: sequence)
        let to = String(from.dropLast(".undo".count)) + ".skipped"
        guard rename(from, to) == 0 else { throw .system(SystemError("rename", path: from)) }
        do {
            try syncDirectory(directory)
        } catch {
            throw .system(error)
        }
        return to
    }

    /// Drops the entries past `kept`, and past `keptBytes` down to `keptAtLeast`, and skipped entries older than the oldest kept.
    func prune() throws(UndoJournalError) {
        let entries = try names()
        let live = entries.filter { !$0.skipped }.sorted { $0.sequence > $1.sequence }
        var total: Int64 = 0
        var keptCount = 0
        var oldestKept = UInt64.max
        for entry in live {
            var info = stat()
            total += stat(join(directory, entry.name), &info) == 0 ? Int64(info.st_size) : 0
            guard keptCount < Self.kept, keptCount < Self.keptAtLeast || total <= Self.keptBytes else { break }
            keptCount += 1
            oldestKept = entry.sequence
        }
        for entry in entries where entry.sequence < oldestKept {
            let path = join(directory, entry.name)
            guard unlink(path) == 0 || errno == ENOENT else { throw .system(SystemError("unlink", path: path)) }
        }
    }

    func path(of sequence: UInt64) -> String {
        let digits = String(sequence)
        return join(directory, String(repeating: "0", count: max(0, 16 - digits.count)) + digits + ".undo")
    }

    /// The live entries' numbers, oldest first.
    private func sequences() throws(UndoJournalError) -> [UInt64] {
        try names().filter { !$0.skipped }.map(\.sequence).sorted()
    }

    /// Every entry file, live or skipped.
    private func names() throws(UndoJournalError) -> [(name: String, sequence: UInt64, skipped: Bool)] {
        guard let entries = listDirectory(directory) else {
            throw .system(SystemError("list", path: directory))
        }
        return entries.compactMap { entry -> (name: String, sequence: UInt64, skipped: Bool)? in
            guard let name = entry.name, name.utf8.count > 16 else { return nil }
            let suffix = name.dropFirst(16)
            guard suffix == ".undo" || suffix == ".skipped", let sequence = UInt64(name.prefix(16)) else { return nil }
            return (name, sequence, suffix == ".skipped")
        }
    }
}
