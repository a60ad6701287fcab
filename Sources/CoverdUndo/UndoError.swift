import CoverdBase
import CoverdCache
import CoverdModel
import CoverdRecords
import Foundation

/// Why `coverd remove` or `coverd undo` changed nothing. Every case says
/// what failed and where (album, file, errno).
public enum UndoError: Error, Sendable, CustomStringConvertible {
    /// No readable record holds the album; `unreadable` names the files that could not be read, and why.
    case albumNotFound(AlbumID, recordsDirectory: String, unreadable: [String])
    case removal(RecordRemovalError)
    case unreadableRecord(path: String, FileReadError)
    case write(SystemError)
    /// The removal did not reach the file, and its journal entry could not be taken back either.
    indirect case writeLeftEntry(UndoError, UndoJournalError)
    /// The record changed while the removal was being journaled (an editor saved it): nothing was written.
    case changedDuringRemoval(record: String)
    /// The change was made, but flushing its directory failed, so a crash could still take it back.
    case notFlushed(record: String, SystemError)
    case symbolicLink(record: String, target: String)
    case hardLinked(record: String, links: Int)
    case index(IndexError)
    case journal(UndoJournalError)
    case nothingToUndo(journal: String)
    /// The record file is neither as the removal left it nor as it was before: someone changed it since.
    case changedSince(record: String, album: AlbumID, removedAt: Date, entry: String)
    /// The newest entry cannot be read; `undo --skip` sets it aside.
    case unusableEntry(UndoJournalError)

    public var description: String {
        switch self {
        case .albumNotFound(let id, let records, let unreadable):
            let skipped = unreadable.isEmpty ? "" : "; these could not be read, and may hold it: " + unreadable.joined(separator: "; ")
            return "no album \(id) in the records under \(records)\(skipped)"
        case .removal(let error): return "\(error)"
        case .unreadableRecord(let path, let error): return "cannot read \(path): \(UndoError.describe(error))"
        case .write(let error): return "\(error); the record file is as it was"
        case .writeLeftEntry(let error, let journal):
            return "\(error); its undo entry stays too (\(journal)): the next undo will say the removal had not happened"
        case .changedDuringRemoval(let record):
            return "\(record) changed while the album was being removed (saved by another program?); nothing was written: run coverd remove again"
        case .notFlushed(let record, let error):
            return "the album was taken out of \(record), but \(error), so a crash could bring it back; coverd undo can put it back"
        case .symbolicLink(let record, let target):
            return "\(record) is a symbolic link to \(target); rewriting it would replace the link, so remove the album from \(target) by hand"
        case .hardLinked(let record, let links):
            return "\(record) has \(links) hard links; rewriting it would leave the album in the others, so edit it by hand"
        case .index(let error): return "\(error)"
        case .journal(let error): return "\(error)"
        case .nothingToUndo(let journal): return "nothing to undo (the undo journal \(journal) is empty)"
        case .changedSince(let record, let album, let removedAt, let entry):
            return "\(record) has changed since album \(album) was removed from it (\(removedAt)); nothing was restored, "
                + "so those changes are kept. Put the album back with coverd add, or edit the file; "
                + "coverd undo --skip sets this removal (\(entry)) aside to undo older ones."
        case .unusableEntry(let error):
            return "\(error); coverd undo --skip sets it aside to undo older removals"
        }
    }

    static func describe(_ error: FileReadError) -> String {
        switch error {
        case .cannotOpen(let code), .readFailed(let code): return SystemError.describe(code)
        case .notRegularFile(let kind): return "it is a \(kind), not a regular file"
        case .tooLarge(let size, let limit): return "\(size) bytes, over the \(limit)-byte limit"
        }
    }
}
