#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CoverdBase
import CoverdCache
import CoverdModel
import CoverdRecords
import Foundation

/// `coverd remove`: takes an album out of its record file (contract §9),
/// after writing the undo journal's entry, so a crash between the two loses
/// nothing: `undo` then finds the file as it was and says so. A running
/// daemon sees the change like any edit.
public struct AlbumRemover: Sendable {
    public var recordsDirectory: String
    public var cacheDirectory: String
    public var limits: RecordLimits

    public init(recordsDirectory: String, cacheDirectory: String, limits: RecordLimits = RecordLimits()) {
        self.recordsDirectory = recordsDirectory
        self.cacheDirectory = cacheDirectory
        self.limits = limits
    }

    /// What a removal did.
    public struct Removal: Sendable, Equatable {
        public var record: String
        /// True when the file held only that album and was deleted.
        public var deletedFile: Bool
    }

    public func remove(_ id: AlbumID, now: Date = Date()) throws(UndoError) -> Removal {
        let record = try recordFile(of: id)
        let journal = UndoJournal(cacheDirectory: cacheDirectory)
        return try journal.locked { () throws(UndoError) -> Removal in
            // Read under the lock: what the journal keeps is what the file is when it changes.
            let (bytes, mode) = try read(record)
            let plan: RecordRemoval
            do throws(RecordRemovalError) {
                plan = try RecordRemoval.plan(removing: id, from: bytes, record: record, decoder: JSONRecordDecoder(validator: AlbumValidator(limits: limits)))
            } catch {
                throw .removal(error)
            }
            let after: [UInt8]? = if case .rewrite(let rewritten) = plan { rewritten } else { nil }
            let entry: UndoEntry
            do throws(UndoJournalError) {
                entry = try journal.append(UndoEntry(record: record, album: id, mode: mode, before: bytes, after: after, removedAt: now))
            } catch {
                throw .journal(error)
            }
            do throws(SystemError) {
                if let after {
                    try writeFileDurably(after, to: record, mode: mode_t(mode))
                } else {
                    try removeFileDurably(record)
                }
            } catch {
                // The file is as it was: its entry would only make the next undo report a removal that never was.
                do throws(UndoJournalError) {
                    try journal.discard(entry)
                } catch let leftover {
                    throw .writeLeftEntry(error, leftover)
                }
                throw .write(error)
            }
            return Removal(record: record, deletedFile: after == nil)
        }
    }

    /// The record file that holds `id`: the one the index names, if it does, else the first found by reading them.
    private func recordFile(of id: AlbumID) throws(UndoError) -> String {
        if let indexed = try indexedRecord(of: id), (try? read(indexed)).map({ contains(id, $0.bytes, indexed) }) == true {
            return indexed
        }
        guard let found = RecordSearch(directory: recordsDirectory, reader: RecordFileReader(limits: limits)).file(holding: id) else {
            throw .albumNotFound(id, recordsDirectory: recordsDirectory)
        }
        return found
    }

    private func indexedRecord(of id: AlbumID) throws(UndoError) -> String? {
        guard access(join(cacheDirectory, CoverIndex.fileName), F_OK) == 0 else { return nil }
        do {
            return try CoverIndex(cacheDirectory: cacheDirectory, readOnly: true).rows().first { $0.id == id }?.record
        } catch {
            throw .index(error)
        }
    }

    private func contains(_ id: AlbumID, _ bytes: [UInt8], _ record: String) -> Bool {
        if case .archive? = RecordFileKind(fileName: splitPath(record).name) { return true }  // refused with its reason later
        let decoder = JSONRecordDecoder(validator: AlbumValidator(limits: limits))
        return (try? decoder.decode(bytes, record: record))?.albums.contains { $0.id == id } ?? false
    }

    private func read(_ record: String) throws(UndoError) -> (bytes: [UInt8], mode: UInt32) {
        var info = stat()
        guard stat(record, &info) == 0 else { throw .unreadableRecord(path: record, .cannotOpen(errno: errno)) }
        do {
            return (try readRegularFile(record, limit: limits.maxFileBytes), UInt32(info.st_mode & 0o7777))
        } catch {
            throw .unreadableRecord(path: record, error)
        }
    }
}
