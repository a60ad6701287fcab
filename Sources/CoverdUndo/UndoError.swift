import CoverdBase
import CoverdCache
import CoverdModel
import CoverdRecords
import Foundation

/// Why `coverd remove` or `coverd undo` changed nothing. Every case says
/// what failed and where (album, file, errno).
public enum UndoError: Error, Sendable, CustomStringConvertible {
    case albumNotFound(AlbumID, recordsDirectory: String)
    case removal(RecordRemovalError)
    case unreadableRecord(path: String, FileReadError)
    case write(SystemError)
    /// The write failed and the journal's entry for it could not be taken back either.
    case writeLeftEntry(SystemError, UndoJournalError)
    case index(IndexError)
    case journal(UndoJournalError)
    case nothingToUndo(journal: String)
    /// The record file is neither as the removal left it nor as it was before: someone changed it since.
    case changedSince(record: String, album: AlbumID, removedAt: Date)

    public var description: String {
        switch self {
        case .albumNotFound(let id, let records): return "no album \(id) in the records under \(records)"
        case .removal(let error): return "\(error)"
        case .unreadableRecord(let path, let error): return "cannot read \(path): \(UndoError.describe(error))"
        case .write(let error): return "\(error); the record file is as it was"
        case .writeLeftEntry(let error, let journal):
            return "\(error); the record file is as it was, but its undo entry stays (\(journal)): the next undo will say the removal had not happened"
        case .index(let error): return "\(error)"
        case .journal(let error): return "\(error)"
        case .nothingToUndo(let journal): return "nothing to undo (the undo journal \(journal) is empty)"
        case .changedSince(let record, let album, let removedAt):
            return "\(record) has changed since album \(album) was removed from it (\(removedAt)); nothing was restored, "
                + "so those changes are kept. Put the album back with coverd add, or edit the file."
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
