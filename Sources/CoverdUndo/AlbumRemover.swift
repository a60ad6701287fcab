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
        /// What the user should know though the removal was made (another file that holds the album too).
        public var warnings: [String]
    }

    public func remove(_ id: AlbumID, now: Date = Date()) throws(UndoError) -> Removal {
        var warnings: [String] = []
        let record = try recordFile(of: id, warnings: &warnings)
        let journal = UndoJournal(cacheDirectory: cacheDirectory)
        return try journal.locked { () throws(UndoError) -> Removal in
            // Read under the lock: what the journal keeps is what the file is when it changes.
            let (bytes, mode, identity) = try read(record)
            let plan: RecordRemoval
            do throws(RecordRemovalError) {
                plan = try RecordRemoval.plan(removing: id, from: bytes, record: record, decoder: JSONRecordDecoder(validator: AlbumValidator(limits: limits)))
            } catch {
                throw .removal(error)
            }
            let after: [UInt8]? = if case .rewrite(let rewritten) = plan { rewritten } else { nil }
            let entry: UndoEntry
            do throws(UndoJournalError) {
                entry = try journal.append(
                    UndoEntry(record: record, album: id, mode: mode, before: bytes, after: after.map(UndoEntry.Fingerprint.init), removedAt: now))
            } catch {
                throw .journal(error)
            }
            // An editor's save while the entry was written would be overwritten, and lost for undo too.
            if FileIdentity(of: record) != identity {
                try abandon(entry, because: .changedDuringRemoval(record: record), journal: journal)
            }
            do throws(DurableFileError) {
                if let after {
                    try writeFileDurably(after, to: record, mode: mode_t(mode))
                } else {
                    try removeFileDurably(record)
                }
            } catch where error.changed {
                // The removal is made and undoable; only its durability is in doubt.
                throw .notFlushed(record: record, error.error)
            } catch {
                try abandon(entry, because: .write(error.error), journal: journal)
            }
            sweepDeadTemporaries(in: splitPath(record).directory, of: splitPath(record).name)
            do throws(UndoJournalError) {
                try journal.prune()
            } catch {
                // The removal is made and journaled; only older entries stay longer than they should.
                warnings.append("the undo journal's older entries could not be pruned: \(error)")
            }
            if let other = RecordSearch(directory: recordsDirectory, reader: RecordFileReader(limits: limits)).file(holding: id, skipping: record) {
                warnings.append("\(other) holds album \(id) too, so the daemon keeps it; remove it again to take it out of that file")
            }
            return Removal(record: record, deletedFile: after == nil, warnings: warnings)
        }
    }

    /// The removal never reached the file (the write failed before its
    /// rename, or the file changed meanwhile): its entry goes, since it would
    /// only make the next undo report a removal that never was.
    private func abandon(_ entry: UndoEntry, because failure: UndoError, journal: UndoJournal) throws(UndoError) -> Never {
        do throws(UndoJournalError) {
            try journal.discard(entry)
        } catch {
            throw .writeLeftEntry(failure, error)
        }
        throw failure
    }

    /// The record file that holds `id`: the one the index names, if it is
    /// under the records directory and holds it, else the first found by reading them.
    private func recordFile(of id: AlbumID, warnings: inout [String]) throws(UndoError) -> String {
        if let indexed = indexedRecord(of: id, warnings: &warnings), indexed.hasPrefix(recordsDirectory.hasSuffix("/") ? recordsDirectory : recordsDirectory + "/"),
            (try? read(indexed)).map({ contains(id, $0.bytes, indexed) }) == true
        {
            return indexed
        }
        var unreadable: [String] = []
        let search = RecordSearch(directory: recordsDirectory, reader: RecordFileReader(limits: limits))
        guard let found = search.file(holding: id, unreadable: &unreadable) else {
            throw .albumNotFound(id, recordsDirectory: recordsDirectory, unreadable: unreadable)
        }
        return found
    }

    /// The file the index says holds `id`; nil when it has no such row or cannot be read, since the search finds the file too.
    private func indexedRecord(of id: AlbumID, warnings: inout [String]) -> String? {
        guard access(join(cacheDirectory, CoverIndex.fileName), F_OK) == 0 else { return nil }
        do {
            return try CoverIndex(cacheDirectory: cacheDirectory, readOnly: true).rows().first { $0.id == id }?.record
        } catch {
            warnings.append("the cover index cannot be read (\(error)); the records were searched instead")
            return nil
        }
    }

    private func contains(_ id: AlbumID, _ bytes: [UInt8], _ record: String) -> Bool {
        if case .archive? = RecordFileKind(fileName: splitPath(record).name) { return true }  // refused with its reason later
        let decoder = JSONRecordDecoder(validator: AlbumValidator(limits: limits))
        return (try? decoder.decode(bytes, record: record))?.albums.contains { $0.id == id } ?? false
    }

    /// The record's bytes and mode. A symbolic link or a file with other hard
    /// links is refused: the rewrite replaces the name it is given, so the
    /// file the other names reach would keep the album.
    private func read(_ record: String) throws(UndoError) -> (bytes: [UInt8], mode: UInt32, identity: FileIdentity) {
        var info = stat()
        guard lstat(record, &info) == 0 else { throw .unreadableRecord(path: record, .cannotOpen(errno: errno)) }
        if info.st_mode & S_IFMT == S_IFLNK { throw .symbolicLink(record: record, target: linkTarget(record)) }
        if info.st_nlink > 1 { throw .hardLinked(record: record, links: Int(info.st_nlink)) }
        do {
            return (try readRegularFile(record, limit: limits.maxFileBytes), UInt32(info.st_mode & 0o7777), FileIdentity(info))
        } catch {
            throw .unreadableRecord(path: record, error)
        }
    }
}
