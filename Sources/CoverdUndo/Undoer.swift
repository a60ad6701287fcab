#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase
import Foundation

/// `coverd undo`: puts back the newest removal in the undo journal, the
/// record file byte for byte as it was, if the file is still as the removal
/// left it (or still absent). Repeated, it goes further back.
public struct Undoer: Sendable {
    public var cacheDirectory: String

    public init(cacheDirectory: String) {
        self.cacheDirectory = cacheDirectory
    }

    /// What an undo did.
    public enum Outcome: Sendable, Equatable {
        /// The record file is as it was before the removal again.
        case restored(UndoEntry)
        /// The file is already as it was before the removal (the removal or an
        /// earlier undo was interrupted between the journal and the file).
        case hadNotHappened(UndoEntry)
    }

    public func undo() throws(UndoError) -> Outcome {
        let journal = UndoJournal(cacheDirectory: cacheDirectory)
        // A mistyped --cache creates nothing: with no journal there is nothing to undo.
        guard access(journal.directory, F_OK) == 0 else { throw .nothingToUndo(journal: journal.directory) }
        return try journal.locked { () throws(UndoError) -> Outcome in
            let newest: UndoEntry?
            do throws(UndoJournalError) {
                newest = try journal.newest()
            } catch {
                throw .unusableEntry(error)
            }
            guard let entry = newest else { throw .nothingToUndo(journal: journal.directory) }
            let current = try read(entry.record)
            let outcome: Outcome
            if let current, current == entry.before {
                outcome = .hadNotHappened(entry)
            } else if current.map({ entry.after?.matches($0) ?? false }) ?? (entry.after == nil) {
                let directory = splitPath(entry.record).directory
                sweepDeadTemporaries(in: directory, of: splitPath(entry.record).name)
                if current == nil {
                    // The folder of a deleted record may have gone with it.
                    do throws(SystemError) {
                        try makeDirectories(directory)
                    } catch {
                        throw .write(error)
                    }
                }
                do throws(DurableFileError) {
                    try writeFileDurably(entry.before, to: entry.record, mode: mode_t(entry.mode))
                } catch where error.changed {
                    throw .notFlushed(record: entry.record, error.error)
                } catch {
                    throw .write(error.error)
                }
                outcome = .restored(entry)
            } else {
                throw .changedSince(record: entry.record, album: entry.album, removedAt: entry.removedAt, entry: journal.path(of: entry.sequence))
            }
            do throws(UndoJournalError) {
                try journal.discard(entry)
            } catch {
                throw .journal(error)
            }
            return outcome
        }
    }

    /// Sets the newest removal aside without restoring it (its file changed
    /// since, or its entry is damaged), so the next undo goes further back;
    /// returns where the entry now is, or nil when the journal was empty.
    public func skipNewest() throws(UndoError) -> String? {
        let journal = UndoJournal(cacheDirectory: cacheDirectory)
        guard access(journal.directory, F_OK) == 0 else { return nil }
        return try journal.locked { () throws(UndoError) -> String? in
            do throws(UndoJournalError) {
                return try journal.skipNewest()
            } catch {
                throw .journal(error)
            }
        }
    }

    /// The file's bytes; nil when there is no such file. A symbolic link is
    /// refused, as the restore would replace it.
    private func read(_ path: String) throws(UndoError) -> [UInt8]? {
        var info = stat()
        if lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFLNK {
            throw .symbolicLink(record: path, target: linkTarget(path))
        }
        do {
            return try readRegularFile(path, limit: 1 << 30)
        } catch .cannotOpen(let code) where code == ENOENT {
            return nil
        } catch {
            throw .unreadableRecord(path: path, error)
        }
    }
}
