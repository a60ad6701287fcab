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
        /// The removal never reached the file (a crash between the journal and the file): it is already as it was.
        case hadNotHappened(UndoEntry)
    }

    public func undo() throws(UndoError) -> Outcome {
        let journal = UndoJournal(cacheDirectory: cacheDirectory)
        return try journal.locked { () throws(UndoError) -> Outcome in
            let newest: UndoEntry?
            do throws(UndoJournalError) {
                newest = try journal.newest()
            } catch {
                throw .journal(error)
            }
            guard let entry = newest else { throw .nothingToUndo(journal: journal.directory) }
            let current = try read(entry.record)
            let outcome: Outcome
            if current == entry.after {
                do throws(SystemError) {
                    try writeFileDurably(entry.before, to: entry.record, mode: mode_t(entry.mode))
                } catch {
                    throw .write(error)
                }
                outcome = .restored(entry)
            } else if current == entry.before {
                outcome = .hadNotHappened(entry)
            } else {
                throw .changedSince(record: entry.record, album: entry.album, removedAt: entry.removedAt)
            }
            do throws(UndoJournalError) {
                try journal.discard(entry)
            } catch {
                throw .journal(error)
            }
            return outcome
        }
    }

    /// The file's bytes; nil when there is no such file.
    private func read(_ path: String) throws(UndoError) -> [UInt8]? {
        do {
            return try readRegularFile(path, limit: 1 << 30)
        } catch .cannotOpen(let code) where code == ENOENT {
            return nil
        } catch {
            throw .unreadableRecord(path: path, error)
        }
    }
}
